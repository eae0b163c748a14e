/**
 * The appliance-wide figures of GET /metrics, read from the database: one query set, taken at most
 * once every GAUGES_TTL whatever the scrape rate (as GET /v1/admin/queue's snapshot,
 * src/mta/overview/QueueOverview.ts), under HERALD_QUERY_TIMEOUT_MS, so a scrape never scans a
 * large queue more than four times a minute and never holds a connection past the deadline.
 *
 * A named read model across areas (README "Who owns which table": reads only): the queue's
 * `deliveries`, the dispatcher's `webhook_deliveries`, the campaigns' fan-out cursor, the tracking
 * log and the sequence subscriptions. Every replica reads the same rows, so each exports the same
 * value: the gauges carry `aggregator: "max"` and the alert examples use `max`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { withStatementTimeout } from "../../db/statement-timeout.ts"

/** The bound: a scrape answers from figures at most this old. */
export const GAUGES_TTL = Duration.seconds(15)

export const LANES = ["transactional", "bulk"] as const
export const WAITING_STATES = ["queued", "deferred"] as const

interface QueueRow {
  readonly state: string
  readonly channel: string
  readonly n: string | number
  readonly oldest_due: Date | null
}

interface TotalsRow {
  readonly webhook_backlog: string | number
  readonly webhook_oldest: Date | null
  readonly campaigns_sending: string | number
  readonly fanout_backlog: string | number
  readonly tracking_backlog: string | number
  readonly tracking_oldest: Date | null
  readonly steps_due: string | number
}

export interface DatabaseFigures {
  readonly takenAt: number
  /** `${state} ${lane}` → deliveries waiting. */
  readonly waiting: ReadonlyMap<string, number>
  /** lane → seconds the most overdue delivery has been due (0: none due). */
  readonly oldestDueSeconds: ReadonlyMap<string, number>
  readonly webhookBacklog: number
  readonly webhookOldestPendingSeconds: number
  readonly campaignsSending: number
  readonly campaignFanoutBacklog: number
  readonly trackingBacklog: number
  readonly trackingLagSeconds: number
  readonly sequenceStepsDue: number
}

const ageSeconds = (now: Date, at: Date | null) => (at === null ? 0 : Math.max(0, (now.getTime() - at.getTime()) / 1000))

/** Deliveries waiting by state and lane, with the earliest due time among those due now (the deliveries_due index). */
const queueRows = (sql: SqlClient.SqlClient, now: Date) =>
  sql<QueueRow>`
    SELECT state, channel, count(*) AS n, min(next_attempt_at) FILTER (WHERE next_attempt_at <= ${now}) AS oldest_due
    FROM deliveries WHERE state IN ('queued', 'deferred') GROUP BY 1, 2`

const totalsRow = (sql: SqlClient.SqlClient, now: Date) =>
  sql<TotalsRow>`
    SELECT
      (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS webhook_backlog,
      (SELECT min(created_at) FROM webhook_deliveries WHERE status = 'pending') AS webhook_oldest,
      (SELECT count(*) FROM campaigns WHERE status = 'sending') AS campaigns_sending,
      (SELECT coalesce(sum(greatest(coalesce(total_contacts, 0) - queued_count, 0)), 0) FROM campaigns WHERE status = 'sending') AS fanout_backlog,
      (SELECT count(*) FROM tracking_ingest) AS tracking_backlog,
      (SELECT at FROM tracking_ingest ORDER BY id LIMIT 1) AS tracking_oldest,
      (SELECT count(*) FROM sequence_subscriptions WHERE state = 'active' AND next_due_at <= ${now}) AS steps_due`

/** One reading of every database figure, in one transaction under the statement timeout. */
export const readDatabaseFigures = (sql: SqlClient.SqlClient, timeoutMs: number) =>
  Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    const [queue, totals] = yield* Effect.all([queueRows(sql, now), totalsRow(sql, now)]).pipe(
      withStatementTimeout(sql, timeoutMs, { message: "The metrics' database figures could not be read within the statement timeout" })
    )
    const waiting = new Map<string, number>()
    const oldestDueSeconds = new Map<string, number>()
    for (const row of queue) {
      waiting.set(`${row.state} ${row.channel}`, Number(row.n))
      oldestDueSeconds.set(row.channel, Math.max(oldestDueSeconds.get(row.channel) ?? 0, ageSeconds(now, row.oldest_due)))
    }
    const t = totals[0]!
    return {
      takenAt: now.getTime(),
      waiting,
      oldestDueSeconds,
      webhookBacklog: Number(t.webhook_backlog),
      webhookOldestPendingSeconds: ageSeconds(now, t.webhook_oldest),
      campaignsSending: Number(t.campaigns_sending),
      campaignFanoutBacklog: Number(t.fanout_backlog),
      trackingBacklog: Number(t.tracking_backlog),
      trackingLagSeconds: ageSeconds(now, t.tracking_oldest),
      sequenceStepsDue: Number(t.steps_due)
    } satisfies DatabaseFigures
  })
