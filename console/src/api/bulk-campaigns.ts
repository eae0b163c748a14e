/**
 * Campaigns and sequences (#29 "Views" 5 and 6): the shapes their views read and the calls they
 * make, as the API's OpenAPI documents give them (src/bulk/campaigns, analytics, sequences). The
 * pickers of the flow (lists, segments, templates) read one page at a time through the calls
 * below; only what a view reads is typed. Every call acts as the session's active key.
 */
import { request } from "./client.ts"

export interface Page<T> {
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly items: ReadonlyArray<T>
}

// ---------------------------------------------------------------------------------------------
// Campaigns: /v1/bulk/campaigns (the state table: src/bulk/campaigns/states.ts)

export type CampaignStatus = "draft" | "scheduled" | "sending" | "paused" | "completed" | "cancelled"

export interface Campaign {
  readonly id: string
  readonly name: string
  readonly status: CampaignStatus
  readonly pause_reason: string | null
  readonly template_id: string | null
  readonly subject: string | null
  readonly html: string | null
  readonly body_text: string | null
  readonly mjml: string | null
  readonly preheader: string | null
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
  /** What the mail goes out with: the campaign's sender fields over its template's, or as frozen at the start. */
  readonly sender: { readonly from_email: string | null; readonly from_name: string | null; readonly reply_to: string | null }
  readonly list_ids: ReadonlyArray<string>
  readonly segment_id: string | null
  readonly total_contacts: number | null
  readonly scheduled_at: string | null
  readonly sent_count: number
  readonly failed_count: number
  readonly delivery_rate: number
  readonly created_at: string
  readonly started_at: string | null
  readonly completed_at: string | null
}

/** What the flow writes: content, sender and audience (a draft only). */
export interface CampaignDraft {
  readonly name: string
  readonly template_id: string | null
  readonly subject: string | null
  readonly html: string | null
  readonly body_text: string | null
  readonly from_email: string | null
  readonly from_name: string | null
  readonly list_ids: ReadonlyArray<string>
  readonly segment_id: string | null
}

export type CampaignAction = "pause" | "resume" | "cancel"

/** The calls each state allows (the API's ALLOWED_FROM): the page offers only these. */
export const ALLOWED_FROM: Readonly<Record<CampaignAction | "send" | "delete", ReadonlyArray<CampaignStatus>>> = {
  send: ["draft", "paused"],
  pause: ["sending", "scheduled"],
  resume: ["paused"],
  cancel: ["draft", "scheduled", "sending", "paused"],
  delete: ["draft", "completed", "cancelled"]
}

export interface CampaignAnalytics {
  readonly campaign_id: string
  readonly delivered: number
  readonly opens_unique: number
  readonly opens_total: number
  readonly clicks_unique: number
  readonly clicks_total: number
  readonly bounces: number
  readonly complaints: number
  readonly unsubs: number
  readonly rates: { readonly open: number; readonly ctr: number; readonly ctor: number; readonly bounce: number; readonly complaint: number; readonly unsub: number }
  readonly top_links: ReadonlyArray<{ readonly url: string; readonly clicks_unique: number; readonly clicks_total: number }>
  readonly timeline: ReadonlyArray<{ readonly at: string; readonly delivered: number; readonly opens: number; readonly clicks: number }>
  readonly detail_window_days: number
}

const campaignPath = (id: string) => `/v1/bulk/campaigns/${encodeURIComponent(id)}`

export const campaignsApi = {
  list: (limit: number, offset: number) => request<Page<Campaign>>("GET", "/v1/bulk/campaigns", { query: { limit, offset } }),
  get: (id: string) => request<Campaign>("GET", campaignPath(id)),
  create: (draft: CampaignDraft) => request<Campaign>("POST", "/v1/bulk/campaigns", { body: draft }),
  update: (id: string, draft: CampaignDraft) => request<Campaign>("PATCH", campaignPath(id), { body: draft }),
  remove: (id: string) => request<unknown>("DELETE", campaignPath(id)),
  /** `scheduledAt`: ISO UTC; undefined sends now. */
  send: (id: string, scheduledAt: string | undefined) =>
    request<{ id: string; status: "sending" | "scheduled" }>("POST", `${campaignPath(id)}/send`, {
      body: scheduledAt === undefined ? {} : { scheduled_at: scheduledAt }
    }),
  act: (id: string, action: CampaignAction) => request<Campaign>("POST", `${campaignPath(id)}/${action}`),
  analytics: (id: string) => request<CampaignAnalytics>("GET", `${campaignPath(id)}/analytics`),
  /** The per-recipient CSV: a plain link, the session cookie authenticates the download. */
  csvUrl: (id: string) => `${campaignPath(id)}/analytics?format=csv`
}

// ---------------------------------------------------------------------------------------------
// What the flow picks from: lists, segments (with the preview's sendable count), templates

export interface ListSummary {
  readonly id: string
  readonly name: string
  readonly contact_count: number
  readonly sendable_count: number
}

export interface SegmentSummary {
  readonly id: string
  readonly name: string
  readonly rules: unknown
}

export interface TemplateSummary {
  readonly id: string
  readonly name: string
  readonly subject: string | null
  readonly from_email: string | null
}

export interface SegmentPreview {
  readonly total: number
  readonly sendable: number
}

export const audienceApi = {
  lists: (limit: number, offset: number) => request<Page<ListSummary>>("GET", "/v1/bulk/lists", { query: { limit, offset } }),
  list: (id: string) => request<ListSummary>("GET", `/v1/bulk/lists/${encodeURIComponent(id)}`),
  segments: (limit: number, offset: number) => request<Page<SegmentSummary>>("GET", "/v1/bulk/segments", { query: { limit, offset } }),
  segment: (id: string) => request<SegmentSummary>("GET", `/v1/bulk/segments/${encodeURIComponent(id)}`),
  /** How many contacts the saved segment's rules match, and how many of them may be mailed. */
  segmentCount: async (id: string): Promise<SegmentPreview> => {
    const segment = await audienceApi.segment(id)
    return request<SegmentPreview>("POST", "/v1/bulk/segments/preview", { body: { rules: segment.rules, limit: 1 } })
  },
  templates: (limit: number, offset: number) => request<Page<TemplateSummary>>("GET", "/v1/bulk/templates", { query: { limit, offset } })
}

// ---------------------------------------------------------------------------------------------
// Test-send: the campaign's own endpoint

/**
 * The saved campaign as a contact would get it, to one address (`[Test]` subject, no tracking):
 * `POST /v1/bulk/campaigns/{id}/test-send`, rendered by Herald as delivery renders it.
 */
export const testSend = (campaignId: string, to: string): Promise<{ message_ids: ReadonlyArray<string> }> =>
  request<{ message_ids: ReadonlyArray<string> }>("POST", `/v1/bulk/campaigns/${encodeURIComponent(campaignId)}/test-send`, { body: { to: [to] } })

// ---------------------------------------------------------------------------------------------
// Sequences: /v1/bulk/sequences

export type SubscriptionState = "active" | "paused" | "completed" | "cancelled"
export const SUBSCRIPTION_STATES: ReadonlyArray<SubscriptionState> = ["active", "paused", "completed", "cancelled"]

export interface Sequence {
  readonly id: string
  readonly name: string
  readonly status: "active" | "inactive"
  readonly from_email: string | null
  readonly from_name: string | null
  readonly created_at: string
  readonly step_count: number
  readonly subscriptions: Readonly<Record<SubscriptionState, number>>
}

export interface Step {
  readonly id: number
  readonly position: number
  readonly offset_seconds: number
  readonly subject: string | null
  readonly html: string | null
  readonly body_text: string | null
  readonly template_id: string | null
}

export interface StepWrite {
  readonly offset_seconds: number
  readonly subject: string | null
  readonly body_text: string | null
  readonly html: string | null
  readonly template_id: string | null
}

export interface Subscription {
  readonly id: string
  readonly email: string
  readonly state: SubscriptionState
  readonly reason: string | null
  readonly last_step_id: number | null
  readonly next_due_at: string | null
  readonly hold_reason: string | null
  readonly enrolled_at: string
}

export interface EnrollResult {
  readonly enrolled: number
  readonly already_in: number
  readonly skipped_terminal: number
  readonly suppressed: number
  readonly total: number
  readonly truncated: boolean
}

export type SubscriptionAction = "pause" | "resume" | "cancel"

const sequencePath = (id: string) => `/v1/bulk/sequences/${encodeURIComponent(id)}`

export const sequencesApi = {
  list: (limit: number, offset: number) => request<Page<Sequence>>("GET", "/v1/bulk/sequences", { query: { limit, offset } }),
  get: (id: string) => request<Sequence>("GET", sequencePath(id)),
  create: (body: { name: string; from_email: string | null; from_name: string | null }) => request<Sequence>("POST", "/v1/bulk/sequences", { body }),
  update: (id: string, body: { name?: string; status?: "active" | "inactive"; from_email?: string | null; from_name?: string | null }) =>
    request<Sequence>("PATCH", sequencePath(id), { body }),
  steps: (id: string) => request<ReadonlyArray<Step>>("GET", `${sequencePath(id)}/steps`),
  addStep: (id: string, step: StepWrite) => request<Step>("POST", `${sequencePath(id)}/steps`, { body: step }),
  updateStep: (id: string, stepId: number, step: StepWrite) => request<Step>("PATCH", `${sequencePath(id)}/steps/${stepId}`, { body: step }),
  removeStep: (id: string, stepId: number) => request<unknown>("DELETE", `${sequencePath(id)}/steps/${stepId}`),
  reorder: (id: string, order: ReadonlyArray<number>) => request<ReadonlyArray<Step>>("PUT", `${sequencePath(id)}/steps/order`, { body: { order } }),
  /** Exactly one of the two (the API refuses both or neither). */
  enroll: (id: string, audience: { list_id: string } | { segment_id: string }) =>
    request<EnrollResult>("POST", `${sequencePath(id)}/enroll`, { body: audience }),
  subscriptions: (id: string, state: SubscriptionState | undefined, limit: number, offset: number) =>
    request<Page<Subscription>>("GET", `${sequencePath(id)}/subscriptions`, { query: { state, limit, offset } }),
  actOn: (id: string, subscriptionId: string, action: SubscriptionAction) =>
    request<Subscription>("POST", `${sequencePath(id)}/subscriptions/${encodeURIComponent(subscriptionId)}/${action}`)
}
