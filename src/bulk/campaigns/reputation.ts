/**
 * Protect the sender's reputation per campaign (issue 30 item 11): a `sending` campaign whose hard
 * bounces reach HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT of its final deliveries, or whose complaints reach
 * HERALD_CAMPAIGN_COMPLAINT_PAUSE_PCT of them, pauses itself with `pause_reason` `bounce_rate` /
 * `complaint_rate` and its queued rows held, as a manual pause holds them — judged only once it
 * has HERALD_CAMPAIGN_PAUSE_MIN final deliveries. `resume` continues, and the check judges it again
 * only after another PAUSE_MIN are final (`reputation_armed_from`, set at that resume). The rates
 * are the whole campaign's. No event: the contract has no campaign pause event, and the other
 * automatic pauses emit none either.
 *
 * Where it runs: the campaigns actor (FanOut.ts), every HERALD_CAMPAIGN_REPUTATION_CHECK_SECONDS (5 s by
 * default; never oftener than the actor's 1 s tick), over the
 * sending campaigns — one statement counting each one's deliveries (the queue's read model) and
 * complaints (`contact_engagement`, by its campaign index). Nothing is counted per outcome: the
 * outcomes' hot paths (the MTA's completions, DSNs, complaints) are untouched.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { holdCampaignDeliveries } from "../../mta/queue/campaign-rows.ts"
import { campaignFinalCounts } from "../../mta/queue/read-models/campaign-progress.ts"
import type { PauseReason } from "./states.ts"

/** Sending campaigns judged per check (oldest first), as the actor's other chores bound theirs. */
const CAMPAIGNS_PER_CHECK = 20

export const REPUTATION_REASONS: ReadonlyArray<PauseReason> = ["bounce_rate", "complaint_rate"]

export interface ReputationLimits {
  readonly campaignBouncePausePct: number
  readonly campaignComplaintPausePct: number
  readonly campaignPauseMin: number
}

interface Counts {
  readonly final: number
  readonly hard_bounced: number
  readonly complaints: number
  readonly armed_from: number
}

const percent = (part: number, whole: number) => Math.round((part * 10_000) / whole) / 100
const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`

/** The pause a campaign's counts call for, with its message, or undefined. */
export const reputationBreach = (c: Counts, limits: ReputationLimits): { reason: PauseReason; message: string } | undefined => {
  if (c.final - c.armed_from < limits.campaignPauseMin || c.final === 0) return undefined
  if (c.hard_bounced * 100 >= limits.campaignBouncePausePct * c.final) {
    return {
      reason: "bounce_rate",
      message: `${counted(c.hard_bounced, "hard bounce")} in ${c.final} final deliveries (${percent(c.hard_bounced, c.final)} %) reached `
        + `HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT (${limits.campaignBouncePausePct} %): clean the list, then resume`
    }
  }
  if (c.complaints * 100 >= limits.campaignComplaintPausePct * c.final) {
    return {
      reason: "complaint_rate",
      message: `${counted(c.complaints, "complaint")} in ${c.final} final deliveries (${percent(c.complaints, c.final)} %) reached `
        + `HERALD_CAMPAIGN_COMPLAINT_PAUSE_PCT (${limits.campaignComplaintPausePct} %): check the audience and content, then resume`
    }
  }
  return undefined
}

/** Judges the sending campaigns and pauses those over a limit; answers how many it paused. */
export const guardReputation = (limits: ReputationLimits, now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Counts & { readonly id: string }>`
      SELECT c.id, c.reputation_armed_from AS armed_from, k.final, k.hard_bounced,
        (SELECT count(DISTINCT e.email)::integer FROM contact_engagement e WHERE e.campaign_id = c.id AND e.type = 'complained') AS complaints
      FROM campaigns c CROSS JOIN LATERAL (${campaignFinalCounts(sql, sql`c.id`)}) k
      WHERE c.status = 'sending' AND c.started_at IS NOT NULL
      ORDER BY c.started_at LIMIT ${CAMPAIGNS_PER_CHECK}`
    let paused = 0
    for (const row of rows) {
      const breach = reputationBreach(row, limits)
      if (breach === undefined) continue
      paused += yield* sql.withTransaction(Effect.gen(function*() {
        // Still sending (a pause, cancel or completion since the count wins).
        const [moved] = yield* sql`UPDATE campaigns SET status = 'paused', pause_reason = ${breach.reason}, pause_message = ${breach.message},
            updated_at = ${now} WHERE id = ${row.id} AND status = 'sending' RETURNING id`
        if (moved === undefined) return 0
        yield* holdCampaignDeliveries(row.id, now)
        yield* Effect.logWarning(`campaign ${row.id} paused: ${breach.message}`)
        return 1
      }))
    }
    return paused
  })

/**
 * A campaign resumed from a reputation pause is judged again only after another PAUSE_MIN final
 * deliveries: the count now is where that starts (called in resume's transaction, Control.ts).
 */
export const rearmAfterResume = (campaignId: string, pauseReason: PauseReason | null) =>
  pauseReason === null || !REPUTATION_REASONS.includes(pauseReason)
    ? Effect.void
    : Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE campaigns SET reputation_armed_from = (SELECT k.final FROM (${campaignFinalCounts(sql, campaignId)}) k)
        WHERE id = ${campaignId}`.pipe(Effect.asVoid))
