/**
 * The Contacts and Import views' calls to /v1/bulk/contacts (docs/bulk.md "Bulk contacts"), made as the
 * console's active key. Only what a view reads is typed. The import's upload goes through
 * XMLHttpRequest rather than `request`: the file is sent as it is (the browser streams it from
 * disk, the page never reads it) and `upload.onprogress` reports how far it got.
 */
import { ApiError, request } from "./client.ts"
import type { ErrorEnvelope } from "./types.ts"
import type { Page } from "./sender.ts"

export const CONTACT_STATUSES = ["active", "unsubscribed", "bounced", "complained"] as const
export type ContactStatus = typeof CONTACT_STATUSES[number]

export interface Contact {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly status: ContactStatus
  readonly tags: ReadonlyArray<string>
  readonly metadata: Readonly<Record<string, unknown>>
  readonly created_at: string
  readonly updated_at: string
  readonly lists: ReadonlyArray<{ readonly list_id: string; readonly status: "pending" | "confirmed" | "unsubscribed" }>
}

export interface ContactFilters {
  readonly search?: string | undefined
  readonly tag?: string | undefined
  readonly status?: ContactStatus | undefined
}

export interface ContactCreate {
  readonly email: string
  readonly name?: string | null
  readonly tags?: ReadonlyArray<string>
  readonly metadata?: Record<string, unknown>
}

/** Only `active` and `unsubscribed` are set by hand (the API refuses the others). */
export interface ContactPatch {
  readonly name?: string | null
  readonly tags?: ReadonlyArray<string>
  readonly metadata?: Record<string, unknown>
  readonly status?: "active" | "unsubscribed"
}

export interface EngagementItem {
  readonly type: "opened" | "clicked" | "bounced" | "complained" | "unsubscribed"
  readonly at: string
  readonly campaign_id?: string
  readonly sequence_id?: string
  readonly message_id?: string
  readonly detail?: string
}

export interface ContactMessage {
  readonly id: string
  readonly subject: string
  readonly status: string
  readonly created_at: string
}

/** `POST /v1/bulk/contacts/import-preview`. `invalid`: the first 100 invalid entries, index 0-based in the request. */
export interface ImportPreview {
  readonly existing: ReadonlyArray<string>
  readonly total_unique: number
  readonly total_received: number
  readonly invalid_syntax: number
  readonly validation_min: number
  readonly max_invalid_pct: number
  readonly invalid: ReadonlyArray<{ readonly index: number; readonly email: string; readonly reason: string }>
}

export interface ImportResult {
  readonly created: number
  readonly updated: number
  readonly skipped: number
  readonly invalid: number
  readonly errors: ReadonlyArray<{ readonly row: number; readonly email: string; readonly reason: string }>
  readonly confirmations_queued?: number
  readonly confirmations_withheld?: number
}

export interface ImportOptions {
  readonly updateExisting: boolean
  /** Added to every imported contact. */
  readonly tags: ReadonlyArray<string>
}

const contactPath = (idOrEmail: string) => `/v1/bulk/contacts/${encodeURIComponent(idOrEmail)}`

export const contactsApi = {
  list: (filters: ContactFilters, limit: number, offset: number) =>
    request<Page<Contact>>("GET", "/v1/bulk/contacts", { query: { ...filters, limit, offset } }),
  read: (idOrEmail: string) => request<Contact>("GET", contactPath(idOrEmail)),
  create: (contact: ContactCreate) => request<Contact>("POST", "/v1/bulk/contacts", { body: contact }),
  update: (idOrEmail: string, patch: ContactPatch) => request<Contact>("PATCH", contactPath(idOrEmail), { body: patch }),
  remove: (idOrEmail: string) => request<{ id: string; deleted: true }>("DELETE", contactPath(idOrEmail)),
  engagement: (email: string, limit: number, offset: number) =>
    request<Page<EngagementItem> & { email: string }>("GET", `${contactPath(email)}/engagement`, { query: { limit, offset } }),
  messages: (email: string, limit: number, offset: number) =>
    request<Page<ContactMessage>>("GET", `${contactPath(email)}/messages`, { query: { limit, offset } })
}

/** An error answer's body as the console's ApiError (the envelope's message, or what came back). */
export const apiErrorOf = (status: number, text: string): ApiError => {
  try {
    const body = JSON.parse(text) as ErrorEnvelope
    if (typeof body.error?.message === "string") {
      return new ApiError(status, body.error.type, body.error.code, body.error.message, body.error.param)
    }
  } catch {
    // Not the API's envelope: said below.
  }
  return new ApiError(status, "api_error", "unexpected_response", `The appliance answered ${status}.`, undefined)
}

export interface Upload {
  readonly done: Promise<ImportResult>
  readonly abort: () => void
}

/**
 * Uploads a CSV (a chosen file or pasted rows as a Blob) to `POST /v1/bulk/contacts/import`,
 * reporting the bytes sent. The API reads and checks it off its main thread; this page only sends.
 */
export const uploadCsv = (csv: Blob, options: ImportOptions, csrf: string, onProgress: (sent: number, total: number) => void): Upload => {
  const query = new URLSearchParams()
  if (options.updateExisting) query.set("update_existing", "true")
  if (options.tags.length > 0) query.set("tags", options.tags.join(","))
  const search = query.toString()
  const xhr = new XMLHttpRequest()
  const done = new Promise<ImportResult>((resolve, reject) => {
    xhr.open("POST", `/v1/bulk/contacts/import${search === "" ? "" : `?${search}`}`)
    xhr.setRequestHeader("content-type", "text/csv")
    xhr.setRequestHeader("accept", "application/json")
    xhr.setRequestHeader("x-herald-csrf", csrf)
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : csv.size)
    xhr.onload = () => {
      if (xhr.status !== 200) return reject(apiErrorOf(xhr.status, xhr.responseText))
      try {
        resolve(JSON.parse(xhr.responseText) as ImportResult)
      } catch {
        reject(new ApiError(xhr.status, "api_error", "unexpected_response", "The appliance's answer to the import was not JSON.", undefined))
      }
    }
    xhr.onerror = () => reject(new ApiError(0, "api_error", "network_error", "The upload was cut off: the appliance could not be reached.", undefined))
    xhr.onabort = () => reject(new ApiError(0, "api_error", "aborted", "The upload was stopped.", undefined))
    xhr.send(csv)
  })
  return { done, abort: () => xhr.abort() }
}
