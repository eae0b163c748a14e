/**
 * The inbound messages as the operator's list reads them, newest first (inbound_received, or the
 * partial inbound_refused_received for `refused`: migrations/0034_console_insight.sql). A row is
 * "refused" when it changed nothing: its `refusal` (processor/trust.ts: who sent it) is set, or
 * the parsers could not read it and it was parked as failed with its `error`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Envelope recipients shown per message: the listener accepts more, the list shows the first. */
const RCPT_SHOWN = 100

interface Row {
  readonly id: string
  readonly received_at: Date
  readonly processed_at: Date | null
  readonly remote_address: string
  readonly helo: string | null
  readonly mail_from: string
  readonly rcpt_to: ReadonlyArray<string>
  readonly size: number
  readonly state: "received" | "processed" | "failed"
  readonly kind: string | null
  readonly authenticated_as: string | null
  readonly refused: boolean
  readonly reason: string | null
}

export const listInbound = (filter: { readonly refused: boolean | undefined; readonly limit: number; readonly offset: number }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The same expression as the partial index's predicate, so the planner uses it.
    const refusedExpr = sql`(refusal IS NOT NULL OR state = 'failed')`
    const where = filter.refused === undefined ? sql`TRUE` : filter.refused ? refusedExpr : sql`NOT ${refusedExpr}`
    const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM inbound_messages WHERE ${where}`
    const rows = yield* sql<Row>`
      SELECT id, received_at, processed_at, remote_address, helo, mail_from, size, state, kind, authenticated_as,
             ${refusedExpr} AS refused,
             CASE WHEN refusal IS NOT NULL THEN refusal WHEN state = 'failed' THEN error END AS reason,
             (SELECT coalesce(jsonb_agg(r), '[]'::jsonb) FROM (
                SELECT r FROM jsonb_array_elements_text(rcpt_to) AS r LIMIT ${RCPT_SHOWN}) shown) AS rcpt_to
      FROM inbound_messages WHERE ${where}
      ORDER BY received_at DESC, id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`
    return {
      total: count?.n ?? 0,
      items: rows.map((r) => ({
        ...r,
        received_at: r.received_at.toISOString(),
        processed_at: r.processed_at?.toISOString() ?? null
      }))
    }
  })
