/**
 * Evaluates accounts against the reputation policy (rates.ts) and pauses the ones past it. Runs
 * after bounces and complaints are recorded and as a periodic sweep; lifting a pause is an admin's
 * decision (POST /v1/admin/accounts/{id}/unpause), and a lifted account is not paused again for
 * the same window's events until new ones arrive (the window restarts at the unpause).
 * Bounces and complaints are counted per delivery, not per report: a DSN or feedback report sent
 * again (by the far side, or replayed by someone who received one) is still one delivery that
 * bounced or was complained about. Complaints are counted from the record behind the events
 * (inbound_complaints: message and recipient are the delivery), hard bounces from the events'
 * message_id and recipient (an event without them counts alone). Simulator deliveries
 * (src/lib/simulator.ts) count for nothing: their bounces and complaints are asked for.
 */
import { SqlClient } from "@effect/sql"
import { Config, Effect } from "effect"
import { checked } from "../../config/app-config.ts"
import { BOUNCED_EVENT, COMPLAINED_EVENT } from "../../events/schema.ts"
import { SIMULATOR_DOMAIN } from "../../lib/simulator.ts"
import { DeliveredCounts } from "./DeliveredCounts.ts"
import { pauseReason, type ReputationPolicy } from "./rates.ts"

export const reputationPolicy: Config.Config<ReputationPolicy> = Config.all({
  bounceRate: checked("HERALD_PAUSE_BOUNCE_RATE", Config.number(), "must be a fraction from 0 to 1", (n) => n >= 0 && n <= 1, 0.05),
  complaintRate: checked("HERALD_PAUSE_COMPLAINT_RATE", Config.number(), "must be a fraction from 0 to 1", (n) => n >= 0 && n <= 1, 0.001),
  windowDays: checked("HERALD_REPUTATION_WINDOW_DAYS", Config.number(), "must be more than 0", (n) => n > 0, 7),
  minVolume: checked("HERALD_REPUTATION_MIN_VOLUME", Config.integer(), "must be 1 or more", (n) => n >= 1, 200)
})

export class Reputation extends Effect.Service<Reputation>()("herald/Reputation", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const policy = yield* reputationPolicy
    const deliveredCounts = yield* DeliveredCounts

    /** Pauses the account when its rates pass the policy; returns the reason, or null. */
    const evaluate = (accountId: string, now: Date) =>
      Effect.gen(function*() {
        const windowStart = new Date(now.getTime() - policy.windowDays * 86_400_000)
        const [account] = yield* sql<{ sending_paused_at: Date | null; reputation_reset_at: Date | null }>`
          SELECT sending_paused_at, reputation_reset_at FROM accounts WHERE id = ${accountId}`
        if (account === undefined || account.sending_paused_at !== null) return null
        const since = account.reputation_reset_at !== null && account.reputation_reset_at > windowStart
          ? account.reputation_reset_at
          : windowStart
        // The deliveries are the queue's: counted by its read model (DeliveredCounts), the rest here.
        const delivered = yield* deliveredCounts.completedSince(accountId, since)
        const [counts] = yield* sql<{ hard: number; complaints: number }>`
          SELECT
            (SELECT count(DISTINCT coalesce((payload->>'message_id') || ' ' || (payload->>'recipient'), id))::int
               FROM events WHERE account_id = ${accountId} AND event = ${BOUNCED_EVENT}
               AND payload->>'category' = 'hard' AND created_at >= ${since}
               AND lower(coalesce(payload->>'recipient', '')) NOT LIKE ${`%@${SIMULATOR_DOMAIN}`}) AS hard,
            (SELECT count(DISTINCT (message_id, email))::int FROM inbound_complaints WHERE account_id = ${accountId}
               AND feedback_type IN ('abuse', 'fraud', 'virus') AND created_at >= ${since}) AS complaints`
        const reason = pauseReason(
          { completed: delivered, hardBounces: counts!.hard, complaints: counts!.complaints },
          policy
        )
        if (reason !== null) {
          yield* sql`UPDATE accounts SET sending_paused_at = ${now}, sending_paused_reason = ${reason}
            WHERE id = ${accountId} AND sending_paused_at IS NULL`
          yield* Effect.logWarning("account paused for its reputation").pipe(
            Effect.annotateLogs({ account_id: accountId, reason })
          )
        }
        return reason
      })

    /** The sweep: every account with bounce or complaint events since `since`. */
    const sweep = (now: Date, since: Date) =>
      Effect.gen(function*() {
        const accounts = yield* sql<{ account_id: string }>`
          SELECT DISTINCT account_id FROM events
          WHERE event IN (${BOUNCED_EVENT}, ${COMPLAINED_EVENT}) AND created_at >= ${since}`
        for (const a of accounts) yield* evaluate(a.account_id, now)
        return accounts.length
      })

    return { evaluate, sweep } as const
  })
}) {}
