/**
 * An account's mail activity per hour or day, as GET /v1/client/stats charts it: what it handed
 * to the queue and what became of it. Three index range scans, one per source, each bounded by
 * the period (migrations/0034_console_insight.sql):
 *
 * - `sent`: deliveries accepted (one per recipient, any origin), by `created_at`
 *   (deliveries_account_created);
 * - `delivered`, `deferred`, `failed`: the outcomes the MTA wrote, by when (delivery_attempts_account_at,
 *   index-only: every deferral counts, so a delivery deferred twice counts twice);
 * - `bounced`, `complained`: the outbox's `email.bounced` (SMTP-time and DSN) and `email.complained`
 *   events (events_account_outcomes).
 *
 * Buckets start at `date_trunc(unit, …)` in UTC; a bucket with nothing in it is not returned (the
 * caller fills the zeros). Counts are decoded: PostgreSQL's bigint counts arrive as strings.
 * At a million deliveries a month these scans take seconds (bench/stats.ts), so the stats read
 * them only for the hours not settled yet and keep settled hours in a rollup of their own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { BOUNCED_EVENT, COMPLAINED_EVENT } from "../../../events/schema.ts"
import { Count, decodedRows } from "./rows.ts"

export const ActivityRow = Schema.Struct({
  start: Schema.DateFromSelf,
  sent: Count,
  delivered: Count,
  deferred: Count,
  bounced: Count,
  complained: Count,
  failed: Count
})
export type ActivityRow = typeof ActivityRow.Type

export type ActivityUnit = "hour" | "day"

/**
 * The account's activity in [from, to), one row per non-empty bucket of `unit`, as an SQL fragment
 * with the columns of ActivityRow: the stats' rollup inserts it (src/transactional/stats/rollup.ts).
 */
export const activityCounts = (sql: SqlClient.SqlClient, accountId: string, unit: ActivityUnit, from: Date, to: Date) => {
  // Literals, not parameters: the partial index events_account_outcomes (migration 0034) names them,
  // and a generic plan with parameters could not use it.
  const bounced = sql.literal(`'${BOUNCED_EVENT}'`)
  const complained = sql.literal(`'${COMPLAINED_EVENT}'`)
  return sql`SELECT start, sum(sent) AS sent, sum(delivered) AS delivered, sum(deferred) AS deferred,
             sum(bounced) AS bounced, sum(complained) AS complained, sum(failed) AS failed
      FROM (
        SELECT date_trunc(${unit}, created_at, 'UTC') AS start, count(*) AS sent,
               0 AS delivered, 0 AS deferred, 0 AS bounced, 0 AS complained, 0 AS failed
          FROM deliveries WHERE account_id = ${accountId} AND created_at >= ${from} AND created_at < ${to} GROUP BY 1
        UNION ALL
        SELECT date_trunc(${unit}, at, 'UTC'), 0, count(*) FILTER (WHERE outcome = 'sent'),
               count(*) FILTER (WHERE outcome = 'deferred'), 0, 0, count(*) FILTER (WHERE outcome = 'failed')
          FROM delivery_attempts WHERE account_id = ${accountId} AND at >= ${from} AND at < ${to} GROUP BY 1
        UNION ALL
        SELECT date_trunc(${unit}, created_at, 'UTC'), 0, 0, 0,
               count(*) FILTER (WHERE event = ${bounced}), count(*) FILTER (WHERE event = ${complained}), 0
          FROM events WHERE account_id = ${accountId} AND event IN (${bounced}, ${complained})
            AND created_at >= ${from} AND created_at < ${to} GROUP BY 1
      ) counted
      GROUP BY start`
}

/** The account's activity in [from, to), one decoded row per non-empty bucket of `unit`, oldest first. */
export const accountActivity = (accountId: string, unit: ActivityUnit, from: Date, to: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decodedRows(ActivityRow, sql`${activityCounts(sql, accountId, unit, from, to)} ORDER BY start`))
