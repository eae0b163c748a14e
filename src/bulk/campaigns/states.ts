/**
 * The campaign's states and which call may leave which (issue 20 "Campaigns and their states"):
 * the one table the API, the scheduler and the fan-out read. Any call in a state not listed for
 * it is refused with 409 `conflict` and changes nothing.
 *
 * | call | from | to |
 * |---|---|---|
 * | send without scheduled_at | draft, paused | sending (the set frozen now, or kept if already frozen) |
 * | send with scheduled_at | draft | scheduled |
 * | the scheduled time comes | scheduled | sending |
 * | pause | sending, scheduled | paused (queued rows not yet attempted are held) |
 * | resume | paused | sending; scheduled again when it was paused before it started and its scheduled_at is still ahead |
 * | unschedule | scheduled | draft (scheduled_at cleared) |
 * | cancel | draft, scheduled, sending, paused | cancelled (rows not yet attempted are dropped) |
 * | every delivery final | sending | completed (campaign.completed once) |
 */
export const CAMPAIGN_STATUSES = ["draft", "scheduled", "sending", "paused", "completed", "cancelled"] as const
export type CampaignStatus = typeof CAMPAIGN_STATUSES[number]

export const PAUSE_REASONS = [
  "manual", "quota_exhausted", "account_suspended", "sending_paused", "domain_unverified", "render_failed", "content_incomplete",
  "postal_address_missing", "bounce_rate", "complaint_rate"
] as const
export type PauseReason = typeof PAUSE_REASONS[number]

export type CampaignCall = "send" | "schedule" | "unschedule" | "pause" | "resume" | "cancel" | "update" | "delete"

export const ALLOWED_FROM: Readonly<Record<CampaignCall, ReadonlyArray<CampaignStatus>>> = {
  send: ["draft", "paused"],
  schedule: ["draft"],
  unschedule: ["scheduled"],
  pause: ["sending", "scheduled"],
  resume: ["paused"],
  cancel: ["draft", "scheduled", "sending", "paused"],
  update: ["draft"],
  delete: ["draft", "completed", "cancelled"]
}

export const allowed = (call: CampaignCall, status: CampaignStatus): boolean => ALLOWED_FROM[call].includes(status)

/** The state table as Markdown, for the OpenAPI description. */
export const STATE_TABLE = [
  "| call | from | to |",
  "|---|---|---|",
  "| `POST …/{id}/send` without `scheduled_at` | `draft`, `paused` | `sending` (the recipient set is frozen now, or kept if already frozen) |",
  "| `POST …/{id}/send` with `scheduled_at` | `draft` | `scheduled` |",
  "| the scheduled time comes | `scheduled` | `sending` |",
  "| `POST …/{id}/pause` | `sending`, `scheduled` | `paused` (queued rows not yet attempted are held) |",
  "| `POST …/{id}/resume` | `paused` | `sending`; `scheduled` again when it was paused before it started and its `scheduled_at` is still ahead |",
  "| `POST …/{id}/unschedule` | `scheduled` | `draft` (`scheduled_at` cleared) |",
  "| `POST …/{id}/cancel` | `draft`, `scheduled`, `sending`, `paused` | `cancelled` (rows not yet attempted are dropped; no `campaign.completed`) |",
  "| every delivery final | `sending` | `completed` (`campaign.completed` once) |",
  "",
  "Any other call in any other state → 409 `conflict`, and nothing changes. `PATCH` only in `draft`; `DELETE` in `draft`, `completed` or `cancelled`."
].join("\n")
