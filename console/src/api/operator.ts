/**
 * The API calls and shapes of the operator's views (#28 "Views" 5–7: keys and webhooks, usage and
 * plan, admin), as the OpenAPI documents give them (src/platform/keys/Api.ts, src/webhooks/Api.ts,
 * src/platform/{usage,plans,subscriptions,dmarc,tickets,admin}/Api.ts, src/mta/overview/Api.ts,
 * src/inbound/admin/Api.ts). Only what a view reads is typed.
 */
import { request } from "./client.ts"

// ---- Keys and webhooks ----------------------------------------------------------------------

export interface Key {
  readonly id: string
  readonly label: string
  readonly token_hint: string
  readonly webhook_url: string | null
  readonly created_at: string
  readonly last_used_at: string | null
}

export interface CreatedKey {
  readonly id: string
  readonly label: string
  /** The secret token: shown only in the answer that created it. */
  readonly token: string
  readonly created_at: string
}

export interface WebhookConfig {
  readonly webhook_url: string | null
  readonly secret_set: boolean
  readonly secret_masked: string | null
}

export type DeliveryStatus = "pending" | "delivered" | "failed"

export interface Delivery {
  readonly id: string
  readonly event: string
  readonly event_id: string
  readonly status: DeliveryStatus
  readonly http_code: number | null
  readonly attempts: number
  readonly error: string | null
  readonly next_attempt_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface DeliveryDetail extends Delivery {
  readonly payload: unknown
  readonly response_body: string | null
  readonly attempt_history: ReadonlyArray<{
    readonly attempted_at: string
    readonly duration_ms: number
    readonly http_code: number | null
    readonly error: string | null
    readonly response_body: string | null
  }>
}

export interface FireResult {
  readonly delivery_id: string
  readonly status: DeliveryStatus
  readonly http_code: number | null
  readonly error: string | null
  readonly duration_ms: number
}

const keyPath = (id: string) => `/v1/client/keys/${encodeURIComponent(id)}`

export const keysApi = {
  list: () => request<{ items: ReadonlyArray<Key> }>("GET", "/v1/client/keys"),
  get: (id: string) => request<Key>("GET", keyPath(id)),
  create: (label: string) => request<CreatedKey>("POST", "/v1/client/keys", { body: { label } }),
  update: (id: string, body: { label: string; webhook_url?: string | null }) =>
    request<{ id: string; label: string; webhook_secret?: string }>("PATCH", keyPath(id), { body }),
  revoke: (id: string) => request<{ id: string; revoked: true }>("DELETE", keyPath(id)),
  webhook: (id: string) => request<WebhookConfig>("GET", `${keyPath(id)}/webhook`),
  removeWebhook: (id: string) => request<WebhookConfig>("DELETE", `${keyPath(id)}/webhook`),
  rotateSecret: (id: string) =>
    request<{ webhook_secret: string; secret_masked: string }>("POST", `${keyPath(id)}/webhook/rotate-secret`),
  test: (id: string) =>
    request<{ event_id: string; delivery_id: string; status: "pending"; webhook_url: string }>("POST", `${keyPath(id)}/webhook/test`),
  deliveries: (id: string, query: { status?: DeliveryStatus | undefined; limit: number; offset: number }) =>
    request<{ total: number; items: ReadonlyArray<Delivery> }>("GET", `${keyPath(id)}/webhook/deliveries`, { query }),
  delivery: (id: string, deliveryId: string) =>
    request<DeliveryDetail>("GET", `${keyPath(id)}/webhook/deliveries/${encodeURIComponent(deliveryId)}`),
  retry: (id: string, deliveryId: string) =>
    request<FireResult>("POST", `${keyPath(id)}/webhook/deliveries/${encodeURIComponent(deliveryId)}/retry`)
}

// ---- Usage and plan -------------------------------------------------------------------------

export interface UsageRecord {
  readonly subscriptions: ReadonlyArray<{
    readonly package_id: string
    readonly package_name: string
    readonly monthly_quota: number
    readonly rate_per_min: number
    readonly billing_period: string
    readonly started_at: string
  }>
  readonly keys: ReadonlyArray<{
    readonly id: string
    readonly label: string
    readonly sent_this_period: number
    readonly monthly_quota: number
    readonly quota_remaining: number
  }>
  readonly next_reset: string
  /** A downgrade waiting for the next reset, or null. */
  readonly pending_change: { readonly package_id: string; readonly effective_at: string } | null
  readonly overage: { readonly emails: number; readonly amount_usd_cents: number }
}

export interface Plan {
  readonly id: string
  readonly name: string
  readonly price_usd_cents: number
  readonly monthly_quota: number
  readonly rate_per_min: number
  readonly features: ReadonlyArray<string>
  readonly selectable: boolean
}

export interface PlanChange {
  readonly sub_id: string
  readonly type: "upgrade" | "downgrade"
  readonly proration?: { readonly amount_usd_cents: number; readonly days_charged: number; readonly cycle_days: number }
  readonly effective_at?: string
}

export interface DmarcReport {
  readonly id: number
  readonly domain: string
  readonly org_name: string
  readonly report_id: string
  readonly date_begin: number
  readonly date_end: number
  readonly policy_p: string
}

export interface DmarcRecord {
  readonly source_ip: string
  readonly count: number
  readonly disposition: string | null
  readonly dkim: string | null
  readonly spf: string | null
  readonly header_from: string | null
}

export interface DmarcReportDetail extends DmarcReport {
  readonly messages: number
  readonly received_at: string
  readonly records: ReadonlyArray<DmarcRecord>
}

export type TicketStatus = "open" | "answered" | "closed"
export type TicketPriority = "low" | "normal" | "high" | "urgent"

export interface TicketSummary {
  readonly id: string
  readonly subject: string
  readonly status: TicketStatus
  readonly priority: TicketPriority
  readonly category: string
  readonly created_at: string
  readonly updated_at: string
}

export interface Ticket extends TicketSummary {
  readonly messages: ReadonlyArray<{
    readonly id: string
    readonly author: "customer" | "support"
    readonly body: string
    readonly created_at: string
  }>
}

export const usageApi = {
  usage: () => request<UsageRecord>("GET", "/v1/client/usage"),
  plans: () => request<{ items: ReadonlyArray<Plan> }>("GET", "/v1/client/plans"),
  changePlan: (packageId: string, password: string) =>
    request<PlanChange>("POST", "/v1/client/subscriptions/change-plan", { body: { package_id: packageId, password } }),
  cancelPendingChange: (password: string) =>
    request<UsageRecord>("POST", "/v1/client/subscriptions/cancel-pending-change", { body: { password } }),
  dmarcReports: (page: number, perPage: number) =>
    request<{ page: number; per_page: number; total: number; items: ReadonlyArray<DmarcReport> }>(
      "GET", "/v1/client/dmarc/reports", { query: { page, per_page: perPage } }),
  dmarcReport: (id: number) => request<DmarcReportDetail>("GET", `/v1/client/dmarc/reports/${id}`),
  tickets: () => request<{ items: ReadonlyArray<TicketSummary> }>("GET", "/v1/tickets"),
  ticket: (id: string) => request<Ticket>("GET", `/v1/tickets/${encodeURIComponent(id)}`),
  openTicket: (body: { subject: string; body: string; priority: TicketPriority }) =>
    request<Ticket>("POST", "/v1/tickets", { body }),
  reply: (id: string, body: string) => request<Ticket>("POST", `/v1/tickets/${encodeURIComponent(id)}/messages`, { body: { body } })
}

// ---- Admin ----------------------------------------------------------------------------------

export interface Account {
  readonly id: string
  readonly name: string
  readonly email: string
  readonly is_admin: boolean
  readonly status: string
  readonly package_id: string | null
  readonly sending_paused_reason: string | null
  readonly rate_per_min_override: number | null
  readonly monthly_quota_override: number | null
  readonly created_at: string
}

export interface QueueSite {
  readonly site: string
  readonly shaping?: string
  readonly queued: number
  readonly deferred: number
  readonly oldest_due_at: string | null
  readonly deferrals_last_hour: number
  readonly connections: number
  readonly max_connections: number
  readonly max_per_minute: number | null
  readonly paused_until?: string | null
}

export interface InboundReport {
  readonly id: string
  readonly received_at: string
  readonly remote_address: string
  readonly mail_from: string
  readonly kind: string | null
  readonly state: string
  readonly refused: boolean
  readonly reason: string | null
}

export interface Page<T> {
  readonly total: number
  readonly items: ReadonlyArray<T>
  readonly generated_at?: string
}

const accountPath = (id: string) => `/v1/admin/accounts/${encodeURIComponent(id)}`

export const adminApi = {
  accounts: (limit: number, offset: number) => request<Page<Account>>("GET", "/v1/admin/accounts", { query: { limit, offset } }),
  account: (id: string) => request<Account>("GET", accountPath(id)),
  createAccount: (body: { name: string; email: string; password: string; package_id?: string }) =>
    request<Account>("POST", "/v1/admin/accounts", { body }),
  assignPlan: (id: string, packageId: string) => request<Account>("PUT", `${accountPath(id)}/plan`, { body: { package_id: packageId } }),
  setLimits: (id: string, body: { rate_per_min: number | null; monthly_quota: number | null }) =>
    request<Account>("PATCH", `${accountPath(id)}/limits`, { body }),
  action: (id: string, action: "suspend" | "unsuspend" | "unpause") => request<Account>("POST", `${accountPath(id)}/${action}`),
  queue: (limit: number, offset: number) => request<Page<QueueSite>>("GET", "/v1/admin/queue", { query: { limit, offset } }),
  refusedInbound: (limit: number, offset: number) =>
    request<Page<InboundReport>>("GET", "/v1/admin/inbound", { query: { refused: "true", limit, offset } })
}
