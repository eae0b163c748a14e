/**
 * The sender's views (Overview, Messages, Domains, Suppressions): the shapes they read and the
 * calls they make, as the API's OpenAPI documents give them (src/transactional/stats, audit,
 * messages; src/platform/domains, suppressions, usage, admin). Only what a view reads is typed.
 */
import { usageApi } from "./operator.ts"
import { request, requestWithHeaders } from "./client.ts"

// ---------------------------------------------------------------------------------------------
// Overview: GET /v1/client/stats, GET /v1/client/usage

export type StatsPeriod = "24h" | "7d" | "30d"

export const STAT_SERIES = ["sent", "delivered", "deferred", "bounced", "complained", "failed"] as const
export type StatSeries = typeof STAT_SERIES[number]

export type StatsBucket = { readonly start: string } & { readonly [S in StatSeries]: number }

export interface Stats {
  readonly period: StatsPeriod
  readonly granularity: "hour" | "day"
  readonly buckets: ReadonlyArray<StatsBucket>
  readonly webhook_backlog: { readonly key_id: string; readonly pending: number; readonly oldest_pending_at: string | null }
  readonly reputation: { readonly paused: boolean; readonly reason: string | null }
}

/** The usage record: one type and one call for the overview and the usage view (operator.ts). */
export type { UsageRecord } from "./operator.ts"

/** The RateLimit-* headers of an answer (docs/sending.md "Rate limit"): the tighter of the key's and the account's windows. */
export interface RateHeadroom {
  readonly limit: number
  readonly remaining: number
  /** Unix seconds. */
  readonly reset: number
}

const rateHeadroomOf = (headers: Headers): RateHeadroom | undefined => {
  const [limit, remaining, reset] = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((name) => headers.get(name))
  if (limit == null || remaining == null || reset == null) return undefined
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) }
}

export const overviewApi = {
  /** The stats, and the key's rate headroom when the answer carries the RateLimit headers. */
  stats: async (period: StatsPeriod): Promise<{ stats: Stats; headroom: RateHeadroom | undefined }> => {
    const { body, headers } = await requestWithHeaders<Stats>("GET", "/v1/client/stats", { query: { period } })
    return { stats: body, headroom: rateHeadroomOf(headers) }
  },
  usage: usageApi.usage
}

// ---------------------------------------------------------------------------------------------
// Messages: GET /v1/mail/audit, GET /v1/mail/messages/{id}, …/content, …/content/html

export type AuditEvent = "queued" | "sent" | "failed"

export interface AuditItem {
  readonly id: string
  readonly ts: string
  readonly event: AuditEvent
  readonly recipient: string
  readonly subject: string
  readonly from: string
  readonly message_id: string
  readonly app: string
  readonly attempts: number
  readonly smtp_reply: string | null
}

export interface Page<T> {
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly items: ReadonlyArray<T>
}

export interface AuditFilters {
  readonly event?: AuditEvent | undefined
  /** Substring of the recipient or the subject. */
  readonly search?: string | undefined
  /** A key's id. */
  readonly app?: string | undefined
  /** ISO 8601, inclusive. */
  readonly from?: string | undefined
  readonly to?: string | undefined
}

export interface TimelineEntry {
  readonly at: string
  readonly type: string
  readonly recipient: string
  readonly host?: string
  readonly reply?: string
  readonly status?: string
  readonly url?: string
}

export interface MessageView {
  readonly id: string
  readonly from: { readonly email: string; readonly name?: string }
  readonly subject: string
  readonly created_at: string
  readonly channel: "transactional" | "bulk"
  readonly recipients: ReadonlyArray<{ readonly email: string; readonly state: string }>
  readonly timeline: ReadonlyArray<TimelineEntry>
}

export interface MessageContent {
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly text: string | null
  readonly html: string | null
  readonly attachments: ReadonlyArray<{
    readonly filename: string
    readonly content_type: string
    readonly size: number
    readonly content_id: string | null
  }>
}

const messagePath = (id: string) => `/v1/mail/messages/${encodeURIComponent(id)}`

export const messagesApi = {
  audit: (filters: AuditFilters, limit: number, offset: number) =>
    request<Page<AuditItem>>("GET", "/v1/mail/audit", { query: { ...filters, limit, offset } }),
  message: (id: string) => request<MessageView>("GET", messagePath(id)),
  content: (id: string) => request<MessageContent>("GET", `${messagePath(id)}/content`),
  /** The URL of the HTML part for the sandboxed frame (`images`: remote https: images may load). */
  htmlUrl: (id: string, images: boolean) => `${messagePath(id)}/content/html${images ? "?images=1" : ""}`
}

// ---------------------------------------------------------------------------------------------
// Domains: /v1/client/domains

export type DnsPurpose = "verification" | "dkim" | "spf" | "dmarc" | "return_path"

export interface DnsRecord {
  readonly purpose: DnsPurpose
  readonly type: "TXT" | "MX"
  readonly name: string
  readonly value: string
  readonly optional: boolean
}

export interface CheckedDnsRecord extends DnsRecord {
  readonly status: "verified" | "missing" | "mismatch"
  readonly found: ReadonlyArray<string>
}

export interface Domain {
  readonly domain: string
  readonly verified: boolean
  readonly verified_at: string | null
  readonly verified_by: "dns" | "operator" | null
  readonly return_path_verified: boolean
  readonly records: ReadonlyArray<DnsRecord>
  readonly created_at: string
}

export interface DomainVerification {
  readonly domain: string
  readonly verified: boolean
  readonly records: ReadonlyArray<CheckedDnsRecord>
  readonly ready: boolean
}

const domainPath = (domain: string) => `/v1/client/domains/${encodeURIComponent(domain)}`

export const domainsApi = {
  list: () => request<{ items: ReadonlyArray<Domain> }>("GET", "/v1/client/domains"),
  get: (domain: string) => request<Domain>("GET", domainPath(domain)),
  add: (domain: string) => request<Domain>("POST", "/v1/client/domains", { body: { domain } }),
  verify: (domain: string) => request<DomainVerification>("POST", `${domainPath(domain)}/verify`)
}

// ---------------------------------------------------------------------------------------------
// Suppressions: /v1/client/suppressions (the account's list)

export type SuppressionReason = "bounce" | "complaint" | "unsubscribe" | "manual"

export interface Suppression {
  readonly email: string
  readonly reason: SuppressionReason
  readonly source: string | null
  readonly created_at: string
}

export const suppressionsApi = {
  list: (email: string | undefined, limit: number, offset: number) =>
    request<Page<Suppression>>("GET", "/v1/client/suppressions", { query: { email, limit, offset } }),
  add: (email: string) => request<Suppression>("POST", "/v1/client/suppressions", { body: { email } }),
  remove: (email: string) => request<unknown>("DELETE", `/v1/client/suppressions/${encodeURIComponent(email)}`)
}

/** A list of addresses (or domains) the views page through, add to and remove from. */
export interface EntryListApi<T> {
  readonly list: (search: string | undefined, limit: number, offset: number) => Promise<Page<T>>
  readonly add: (entry: string) => Promise<unknown>
  readonly remove: (entry: string) => Promise<unknown>
}

export const accountSuppressions: EntryListApi<Suppression> = {
  list: suppressionsApi.list,
  add: suppressionsApi.add,
  remove: suppressionsApi.remove
}

// ---------------------------------------------------------------------------------------------
// Admin: the platform suppression list (every account) and the blocked recipient domains

/** The platform list (`scope=platform`, src/platform/suppressions/AdminApi.ts): suppressed for every account. */
export const platformSuppressions: EntryListApi<Suppression> = {
  list: (email, limit, offset) =>
    request<Page<Suppression>>("GET", "/v1/admin/suppressions", { query: { scope: "platform", email, limit, offset } }),
  add: (email) => request<Suppression>("POST", "/v1/admin/suppressions", { body: { email, scope: "platform" } }),
  remove: (email) => request<unknown>("DELETE", `/v1/admin/suppressions/${encodeURIComponent(email)}`, { query: { scope: "platform" } })
}

export interface BlockedDomain {
  readonly domain: string
  readonly reason: string
  readonly created_at: string
}

export const blockedDomains: EntryListApi<BlockedDomain> = {
  list: (domain, limit, offset) => request<Page<BlockedDomain>>("GET", "/v1/admin/blocked-domains", { query: { domain, limit, offset } }),
  add: (domain) => request<BlockedDomain>("POST", "/v1/admin/blocked-domains", { body: { domain } }),
  remove: (domain) => request<unknown>("DELETE", `/v1/admin/blocked-domains/${encodeURIComponent(domain)}`)
}
