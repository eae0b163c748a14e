/**
 * Lists and segments (#29 views 2 and 3): the shapes the views read and the calls they make, as
 * src/bulk/lists/Api.ts and src/bulk/segments/Api.ts give them. Every call acts as the session's
 * active key: lists and segments belong to the key that created them (another key's → 404).
 */
import { request } from "./client.ts"

export interface Page<T> {
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly items: ReadonlyArray<T>
}

// ---------------------------------------------------------------------------------------------
// Lists: /v1/bulk/lists

export interface MailingList {
  readonly id: string
  readonly name: string
  readonly key_id: string
  readonly contact_count: number
  readonly created_at: string
  readonly require_confirmation: 0 | 1
  readonly confirm_from_email: string | null
  readonly confirm_from_name: string | null
  readonly confirm_subject: string | null
  readonly confirm_intro: string | null
  readonly sendable_count: number
  readonly pending_count: number
}

export type ContactStatus = "active" | "unsubscribed" | "bounced" | "complained"
export const CONTACT_STATUSES: ReadonlyArray<ContactStatus> = ["active", "unsubscribed", "bounced", "complained"]

export type MembershipStatus = "pending" | "confirmed" | "unsubscribed"

export interface ListMember {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly status: ContactStatus
  readonly tags: ReadonlyArray<string>
  readonly created_at: string
  readonly membership_status: MembershipStatus
}

export interface MembersAdded extends MailingList {
  readonly confirmations_queued: number
  readonly confirmations_withheld: number
}

export interface ConfirmationSettings {
  readonly require_confirmation: boolean
  /** null clears a setting (the API's default applies); the sender is required when confirmation is on. */
  readonly confirm_from_email: string | null
  readonly confirm_from_name: string | null
  readonly confirm_subject: string | null
  readonly confirm_intro: string | null
}

/** The confirmation mail as a new member would get it, with a placeholder link. */
export interface ConfirmationPreview {
  readonly subject: string
  readonly html: string
  readonly text: string
}

export interface ListDeleteReport {
  readonly deleted: number
  readonly not_found: ReadonlyArray<string>
  readonly forbidden: ReadonlyArray<string>
  readonly in_use: ReadonlyArray<string>
  readonly requested: number
}

/** A member in a path: its id, which never needs more than percent-encoding. */
const listPath = (id: string) => `/v1/bulk/lists/${encodeURIComponent(id)}`

export const listsApi = {
  page: (limit: number, offset: number) => request<Page<MailingList>>("GET", "/v1/bulk/lists", { query: { limit, offset } }),
  create: (name: string) => request<MailingList>("POST", "/v1/bulk/lists", { body: { name } }),
  read: (id: string) => request<MailingList>("GET", listPath(id)),
  rename: (id: string, name: string) => request<MailingList>("PATCH", listPath(id), { body: { name } }),
  remove: (id: string) => request<{ id: string; deleted: true }>("DELETE", listPath(id)),
  /** Several lists in one transaction; the answer says which were not deleted and why. */
  removeMany: (ids: ReadonlyArray<string>) => request<ListDeleteReport>("POST", "/v1/bulk/lists/delete", { body: { ids } }),
  configure: (id: string, settings: ConfirmationSettings) => request<MailingList>("PUT", `${listPath(id)}/confirmation`, { body: settings }),
  previewConfirmation: (id: string) => request<ConfirmationPreview>("POST", `${listPath(id)}/confirmation/preview`, { body: {} }),
  members: (id: string, status: MembershipStatus | undefined, limit: number, offset: number) =>
    request<Page<ListMember>>("GET", `${listPath(id)}/contacts`, { query: { status, limit, offset } }),
  addMembers: (id: string, contacts: ReadonlyArray<string>) =>
    request<MembersAdded>("POST", `${listPath(id)}/contacts`, { body: { contacts } }),
  removeMember: (id: string, contactId: string) =>
    request<{ id: string; deleted: true }>("DELETE", `${listPath(id)}/contacts/${encodeURIComponent(contactId)}`),
  resendConfirmation: (id: string, contactId: string) =>
    request<{ confirmation_sent_at: string }>("POST", `${listPath(id)}/contacts/${encodeURIComponent(contactId)}/resend`)
}

/** At most this many addresses in one add-members call (the API's MembersAdd bound). */
export const MAX_MEMBERS_PER_ADD = 1000

/** The largest page the lists endpoint gives (limit 1..200): the list pickers show this many. */
export const MAX_LIST_PAGE = 200

// ---------------------------------------------------------------------------------------------
// Segments: /v1/bulk/segments (rules: src/bulk/segments/rules.ts)

export type Rule =
  | { readonly field: "tag"; readonly op: "has" | "not_has"; readonly value: string }
  | { readonly field: "status"; readonly op: "is" | "is_not"; readonly value: ContactStatus }
  | { readonly field: "engagement"; readonly op: "opened" | "not_opened" | "clicked" | "not_clicked"; readonly days: number }
  | { readonly field: "created"; readonly op: "before" | "after"; readonly value: string }
  | { readonly field: "list"; readonly op: "in" | "not_in"; readonly value: string }
  | {
    readonly field: "custom"
    readonly op: "is" | "is_not" | "contains" | "exists" | "not_exists"
    readonly field_name: string
    readonly value?: string
  }

export type RuleField = Rule["field"]

export interface SegmentRules {
  readonly match: "all" | "any"
  readonly rules: ReadonlyArray<Rule>
}

export interface Segment {
  readonly id: string
  readonly name: string
  readonly rules: SegmentRules
  readonly created_at: string
  readonly updated_at: string
}

export interface SegmentPreview {
  readonly total: number
  readonly sendable: number
  readonly sample: ReadonlyArray<{ readonly email: string; readonly name: string | null; readonly status: string }>
}

/** The API's bound on a rule set (rules.ts: maxItems 50). */
export const MAX_RULES = 50

/** The sample the live preview asks for: small, so each keystroke's preview stays cheap. */
export const PREVIEW_SAMPLE = 10

const segmentPath = (id: string) => `/v1/bulk/segments/${encodeURIComponent(id)}`

export const segmentsApi = {
  page: (limit: number, offset: number) => request<Page<Segment>>("GET", "/v1/bulk/segments", { query: { limit, offset } }),
  read: (id: string) => request<Segment>("GET", segmentPath(id)),
  create: (name: string, rules: SegmentRules) => request<Segment>("POST", "/v1/bulk/segments", { body: { name, rules } }),
  update: (id: string, name: string, rules: SegmentRules) => request<Segment>("PATCH", segmentPath(id), { body: { name, rules } }),
  remove: (id: string) => request<{ id: string; deleted: true }>("DELETE", segmentPath(id)),
  preview: (rules: SegmentRules) =>
    request<SegmentPreview>("POST", "/v1/bulk/segments/preview", { body: { rules, limit: PREVIEW_SAMPLE } })
}
