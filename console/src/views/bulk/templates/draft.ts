/**
 * The editor's draft: what the person typed, compared with what was last saved (unsaved edits warn
 * before leaving) and turned into the API's fields. Variables are edited as JSON text, so a draft
 * that does not parse yet is kept as typed and reported beside its field.
 */
import type { SampleVars, Template, TemplateContent, TemplateDraft } from "../../../api/bulk-templates.ts"

export interface Draft {
  readonly name: string
  readonly subject: string
  readonly html: string
  readonly body_text: string
  readonly mjml: string
  readonly vars: string
}

export const EMPTY_DRAFT: Draft = { name: "", subject: "", html: "", body_text: "", mjml: "", vars: "{}" }

export const draftOf = (template: Template): Draft => ({
  name: template.name,
  subject: template.subject,
  html: template.html,
  body_text: template.body_text,
  mjml: template.mjml ?? "",
  vars: JSON.stringify(template.vars, null, 2)
})

export const sameDraft = (a: Draft, b: Draft): boolean =>
  a.name === b.name && a.subject === b.subject && a.html === b.html && a.body_text === b.body_text && a.mjml === b.mjml &&
  a.vars === b.vars

export type ParsedVars = { readonly ok: true; readonly value: SampleVars } | { readonly ok: false; readonly message: string }

/** The variables' JSON as an object, or why it is not one. */
export const parseVars = (text: string): ParsedVars => {
  if (text.trim() === "") return { ok: true, value: {} }
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? { ok: true, value: value as SampleVars }
      : { ok: false, message: "Variables must be a JSON object, such as {\"first_name\": \"Ada\"}." }
  } catch (error) {
    return { ok: false, message: `Variables are not valid JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** The content the engine renders (MJML left out when empty: html is then the source). */
export const contentOf = (draft: Draft): TemplateContent => ({
  subject: draft.subject,
  html: draft.html,
  body_text: draft.body_text,
  mjml: draft.mjml.trim() === "" ? null : draft.mjml
})

export const toSave = (draft: Draft, vars: SampleVars): TemplateDraft => ({ name: draft.name, ...contentOf(draft), vars })
