/**
 * The campaigns actor (every replica runs one), four chores per tick, each safe to run on many
 * replicas at once and to be killed at any row:
 *
 * - start: a scheduled campaign whose time has come is claimed (`FOR UPDATE SKIP LOCKED` on its
 *   row, re-checked `status = 'scheduled' AND scheduled_at <= now`), frozen and set `sending` in
 *   one transaction: exactly once, across restarts and replicas.
 * - A/B decision: an A/B test whose wait is over gets its winner in one conditional UPDATE
 *   (ab-test.ts); its fan-out, held at the end of the test share until then, goes on with it.
 * - fan-out: a `sending` campaign with recipients not yet queued gets its next batch written into
 *   the MTA's queue (one message and one delivery per contact, channel `bulk`, the content shared
 *   once) in the transaction that advances its cursor (`queued_count`): a crash loses the whole
 *   batch or none of it, so the next run resumes with neither a duplicate nor a gap. Each queued
 *   recipient is charged to the monthly quota in that transaction; a quota used up without
 *   overage, a suspended or paused account, or a sender domain no longer verified pauses the
 *   campaign with its `pause_reason` instead (DESIGN "Quota, suspension and verification after
 *   the start"), its remaining contacts unqueued.
 * - completion: a fully queued `sending` campaign whose deliveries are all final turns
 *   `completed` and emits `campaign.completed`, in one transaction guarded by `status =
 *   'sending'`: once, whoever gets there first.
 * - reputation: every few seconds, a sending campaign whose hard bounces or complaints reach their
 *   limit pauses itself (reputation.ts).
 *
 * Time comes from Effect's Clock, so tests drive the schedule with TestClock.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { CampaignCompleted } from "../../events/schema.ts"
import { emitEvent } from "../../events/outbox.ts"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { domainOf } from "../../lib/email.ts"
import { Domains } from "../../platform/domains/Domains.ts"
import { AccountLimits } from "../../platform/usage/AccountLimits.ts"
import { reserveQuota } from "../../platform/usage/Quota.ts"
import { writeCampaignBatch } from "../../mta/queue/campaign-batch.ts"
import { campaignHasOpenDeliveries, campaignOutcomes, sharedContentSummary } from "../../mta/queue/read-models/campaign-progress.ts"
import { batchRoom, decideDueWinners, writeAbBatch } from "./ab-test.ts"
import { startSending } from "./Control.ts"
import { chargeable } from "./quota-cover.ts"
import { type CampaignRow, deliveryRate } from "./record.ts"
import type { PauseReason } from "./states.ts"
import { setStatementTimeout } from "../../db/statement-timeout.ts"
import { guardReputation } from "./reputation.ts"

/** Campaigns looked at per chore and tick. */
const CAMPAIGNS_PER_TICK = 20
const TICK = Duration.seconds(1)


export const makeCampaignChores = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const limitsOf = (yield* AccountLimits).of
  const domains = yield* Domains
  const signal = yield* QueueSignal
  const config = yield* AppConfig
  const urls = { trackUrl: config.trackUrl, baseUrl: config.baseUrl }

  /** Pauses the campaign; `message` (what is missing, what the quota lacks) is shown as its pause_message. */
  const pauseFor = (id: string, reason: PauseReason, now: Date, message: string | null = null) =>
    sql`UPDATE campaigns SET status = 'paused', pause_reason = ${reason}, pause_message = ${message}, updated_at = ${now} WHERE id = ${id}`
      .pipe(Effect.as(0))

  /** Starts due scheduled campaigns; answers how many started. */
  const startDue = (now: Date) =>
    sql.withTransaction(Effect.gen(function*() {
      const due = yield* sql<CampaignRow>`SELECT c.*, 0 AS sent_count, 0 AS failed_count FROM campaigns c
        WHERE c.status = 'scheduled' AND c.scheduled_at <= ${now}
        ORDER BY c.scheduled_at LIMIT ${CAMPAIGNS_PER_TICK} FOR UPDATE SKIP LOCKED`
      for (const campaign of due) {
        // Without allow_partial, a quota that cannot cover its recipients pauses it before anything is queued (issue 30 item 2).
        const limits = yield* limitsOf(campaign.account_id, now)
        const cover = campaign.allow_partial ? undefined : limits
        // A campaign that cannot start any more (its template or segment deleted meanwhile) is paused, not retried for ever.
        yield* startSending(campaign, now, urls, config.longQueryTimeoutMs, cover).pipe(
          Effect.catchTags({
            OverageNotOffered: (e) => {
              const message = `${e.requested} recipients to send, ${Math.max(0, e.quota - e.used)} left of the monthly quota and no overage`
              return Effect.zipRight(Effect.logWarning(`campaign ${campaign.id} cannot start: ${message}`), pauseFor(campaign.id, "quota_exhausted", now, message))
            },
            CampaignIncomplete: (e) =>
              Effect.zipRight(Effect.logWarning(`campaign ${campaign.id} cannot start: ${e.message}`), pauseFor(campaign.id, "content_incomplete", now, e.message)),
            // Not retried every tick at the cost of the whole limit each time: paused, as above.
            QueryTooExpensive: (e) =>
              Effect.zipRight(Effect.logWarning(`campaign ${campaign.id} cannot start: ${e.message}`), pauseFor(campaign.id, "manual", now)),
            // Its key has no postal address (issue 30 item 9): paused with that reason until one is set and it is resumed.
            PostalAddressMissing: () => pauseFor(campaign.id, "postal_address_missing", now)
          })
        )
      }
      return due.length
    }))

  /** Why the campaign's account or sender may not send now, if so. */
  const blocker = (campaign: CampaignRow, now: Date) =>
    Effect.gen(function*() {
      const limits = yield* limitsOf(campaign.account_id, now)
      if (limits.status === "suspended") return { reason: "account_suspended" as const, limits }
      if (limits.pausedReason !== null) return { reason: "sending_paused" as const, limits }
      const { state } = yield* domains.sendingState(campaign.account_id, domainOf(campaign.from_email ?? ""), now)
      return { reason: state === "ok" ? null : "domain_unverified" as const, limits }
    })

  /** Writes the next batch of one campaign; answers how many recipients it queued. */
  const fanOutOne = (id: string, now: Date) =>
    sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<CampaignRow>`SELECT c.*, 0 AS sent_count, 0 AS failed_count FROM campaigns c
        WHERE c.id = ${id} AND c.status = 'sending' AND c.queued_count < c.total_contacts FOR UPDATE SKIP LOCKED`
      const campaign = rows[0]
      if (campaign === undefined || campaign.content_id === null) return 0
      // An A/B test waiting for its winner queues nothing past its test share (ab-test.ts).
      const batchLimit = batchRoom(campaign, config.campaignFanoutBatch)
      if (batchLimit === 0) return 0
      // A batch is one statement over up to HERALD_CAMPAIGN_FANOUT_BATCH recipients: the long work's limit.
      yield* setStatementTimeout(sql, config.longQueryTimeoutMs)
      const { limits, reason } = yield* blocker(campaign, now)
      if (reason !== null) return yield* pauseFor(id, reason, now)
      // HERALD_CAMPAIGN_FANOUT_BATCH (10,000) recipients a transaction: the rows are built by the
      // server (writeCampaignBatch), so a batch costs mostly its statement; with 500, 100,000
      // recipients were 200 transactions and the round trips set the pace (bench/campaign.ts). The
      // batch's range and charge are counted by the server too: its 5,000 rows sent here and back
      // were a tenth of the batch's time.
      const after = campaign.queued_count
      const [next] = yield* sql<{ count: number; charged: number; through: number | null }>`
        SELECT count(*)::integer AS count, max(position) AS through,
          count(*) FILTER (WHERE ${chargeable(sql)})::integer AS charged
        FROM (SELECT position, email FROM campaign_recipients WHERE campaign_id = ${id} AND position > ${after}
          ORDER BY position LIMIT ${batchLimit}) r`
      if (next === undefined || next.through === null) return 0
      let { count, through } = next
      if (next.charged > 0) {
        const decision = yield* Effect.either(reserveQuota(limits, campaign.key_id, next.charged))
        if (decision._tag === "Left") {
          if (decision.left._tag === "SqlError") return yield* decision.left
          if (decision.left._tag === "QuotaExhausted") return yield* pauseFor(id, "quota_exhausted", now)
          // Room for part of the batch: queue up to the last recipient that fits, then the next batch finds the quota used up.
          const room = decision.left.quota - decision.left.used
          const [fits] = yield* sql<{ count: number; through: number }>`
            SELECT count(*)::integer AS count, max(position) AS through FROM campaign_recipients
            WHERE campaign_id = ${id} AND position > ${after} AND position <= (
              SELECT position FROM campaign_recipients WHERE campaign_id = ${id} AND position > ${after} AND ${chargeable(sql)}
              ORDER BY position OFFSET ${room - 1} LIMIT 1)`
          count = fits!.count
          through = fits!.through
          yield* reserveQuota(limits, campaign.key_id, room)
        }
      }
      const context = { accountId: campaign.account_id, keyId: campaign.key_id, requestId: id, fromEmail: campaign.from_email!, now }
      if (campaign.ab_test_size !== null) {
        yield* writeAbBatch(context, campaign, { after, through, count }, config.abWaitUnitMs)
      } else {
        // The shared part's subject and size only: the rows are built by the server (writeCampaignBatch).
        const content = Option.getOrThrowWith(yield* sharedContentSummary(campaign.content_id), () =>
          new Error(`campaign ${id}: its content ${campaign.content_id} is not stored`))
        yield* writeCampaignBatch(context, { campaignId: id, shared: { id: campaign.content_id, bytes: content.bytes }, subject: content.subject, after, through, count })
      }
      yield* sql`UPDATE campaigns SET queued_count = ${through}, updated_at = ${now} WHERE id = ${id}`
      return count
    }))

  const fanOut = (now: Date) =>
    Effect.gen(function*() {
      // An A/B test waiting for its winner (its test share queued) is not active: it would hold a place here for nothing.
      const active = yield* sql<{ id: string }>`SELECT id FROM campaigns
        WHERE status = 'sending' AND queued_count < total_contacts AND (ab_winner IS NOT NULL OR queued_count < coalesce(ab_test_size, total_contacts))
        ORDER BY started_at LIMIT ${CAMPAIGNS_PER_TICK}`
      let queued = 0
      for (const { id } of active) queued += yield* fanOutOne(id, now)
      if (queued > 0) yield* signal.wake("herald_queue")
      return queued
    })

  /** Completes the fully queued campaigns whose every delivery is final; answers how many. */
  const complete = (now: Date) =>
    Effect.gen(function*() {
      const candidates = yield* sql<{ id: string }>`SELECT c.id FROM campaigns c
        WHERE c.status = 'sending' AND c.queued_count >= c.total_contacts
          AND NOT ${campaignHasOpenDeliveries(sql, sql`c.id`)}
        LIMIT ${CAMPAIGNS_PER_TICK}`
      let completed = 0
      for (const { id } of candidates) {
        completed += yield* sql.withTransaction(Effect.gen(function*() {
          const done = yield* sql<CampaignRow>`UPDATE campaigns SET status = 'completed', completed_at = ${now}, updated_at = ${now}
            WHERE id = ${id} AND status = 'sending' AND queued_count >= total_contacts RETURNING *`
          const campaign = done[0]
          if (campaign === undefined) return 0
          const counts = yield* campaignOutcomes(id)
          // A delivery turned open again between the look and the lock (it cannot, but never complete early).
          if (counts.open > 0) return yield* Effect.die(new Error(`campaign ${id} still has open deliveries`))
          const sent = counts.sent
          yield* emitEvent({
            accountId: campaign.account_id,
            keyId: campaign.key_id,
            at: now,
            event: CampaignCompleted.make({
              campaign_id: id,
              name: campaign.name,
              sent_count: sent,
              failed_count: counts.failed,
              delivery_rate: deliveryRate(sent, campaign.total_contacts)
            })
          })
          return 1
        }))
      }
      if (completed > 0) yield* signal.wake("herald_events")
      return completed
    })

  /** A/B tests whose wait is over get their winner (ab-test.ts); answers how many. */
  const decideWinners = (now: Date) => decideDueWinners(now).pipe(Effect.provideService(SqlClient.SqlClient, sql))

  let lastReputationCheck = Number.NEGATIVE_INFINITY
  /** The reputation check, at most every HERALD_CAMPAIGN_REPUTATION_CHECK_SECONDS; answers how many campaigns it paused. */
  const guard = (now: Date) =>
    Effect.suspend(() => {
      if (now.getTime() - lastReputationCheck < config.campaignReputationCheckMs) return Effect.succeed(0)
      lastReputationCheck = now.getTime()
      return guardReputation(config, now)
    })

  return { startDue, decideWinners, fanOut, complete, guard } as const
})

export const CampaignsActorLive = actorLayer(
  "campaigns",
  Effect.flatMap(makeCampaignChores, (chores) =>
    actorLoop("campaigns", Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const started = yield* chores.startDue(now)
      const decided = yield* chores.decideWinners(now)
      const queued = yield* chores.fanOut(now)
      yield* chores.complete(now)
      yield* chores.guard(now)
      // More may be waiting: go again at once.
      return started > 0 || decided > 0 || queued > 0 ? Duration.zero : TICK
    })))
)

