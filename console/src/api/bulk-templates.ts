/**
 * The Templates view's calls (issue 29 view 4): /v1/bulk/templates as the session's active key,
 * shapes as src/bulk/templates/Api.ts documents them. Only what the view reads is typed.
 */
import { request } from "./client.ts"

export type SampleVars = Readonly<Record<string, unknown>>

/** The fields an editor changes (and a version holds). */
export interface TemplateContent {
  readonly subject: string
  readonly html: string
  readonly body_text: string
  /** MJML source; when present the API compiles html from it on save. */
  readonly mjml: string | null
}

export interface Template extends TemplateContent {
  readonly id: string
  readonly name: string
  readonly vars: SampleVars
  readonly from_email: string | null
  readonly from_name: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface TemplatePage {
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly items: ReadonlyArray<Template>
}

/** A line of the version history (the history omits the content). */
export interface TemplateVersionEntry {
  readonly id: number
  readonly name: string
  readonly subject: string
  /** The id of the API key that made the change. */
  readonly actor: string
  readonly created_at: string
  readonly html_bytes: number
}

/** GET …/versions/{version}: the history's line plus its content. */
export type TemplateVersion = TemplateVersionEntry & TemplateContent

export interface TemplatePreview {
  readonly subject: string
  readonly html: string
  readonly body_text: string
  /** Every variable the content reads, and those the sample does not give (they render empty). */
  readonly variables: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
}

export interface TemplateDraft extends TemplateContent {
  readonly name: string
  readonly vars: SampleVars
}

const path = (id: string) => `/v1/bulk/templates/${encodeURIComponent(id)}`

export const templatesApi = {
  list: (limit: number, offset: number) => request<TemplatePage>("GET", "/v1/bulk/templates", { query: { limit, offset } }),
  read: (id: string) => request<Template>("GET", path(id)),
  create: (draft: TemplateDraft) => request<Template>("POST", "/v1/bulk/templates", { body: draft }),
  update: (id: string, draft: TemplateDraft) => request<Template>("PATCH", path(id), { body: draft }),
  remove: (id: string) => request<{ id: string; deleted: true }>("DELETE", path(id)),
  /** Renders with the engine of real sends; saves nothing. */
  preview: (content: TemplateContent, vars: SampleVars) =>
    request<TemplatePreview>("POST", "/v1/bulk/templates/preview", { body: { ...content, vars } }),
  versions: (id: string) => request<{ items: ReadonlyArray<TemplateVersionEntry>; max: number }>("GET", `${path(id)}/versions`),
  version: (id: string, version: number) => request<TemplateVersion>("GET", `${path(id)}/versions/${version}`),
  restore: (id: string, version: number) => request<Template>("POST", `${path(id)}/versions/${version}/restore`),
  testSend: (id: string, body: { to_email: string; sample_vars: SampleVars; from_email?: string }) =>
    request<{ ok: boolean; message_id: string; to: string }>("POST", `${path(id)}/test-send`, { body })
}
