/**
 * The queue as a log of deliveries, newest first or in another order: what the transactional
 * audit log reads (its list, its count and its CSV export). One row per recipient delivery with
 * its message's subject, sender and request, decoded at the boundary. The filter speaks the
 * queue's words (delivery states, key ids, a text to search); the audit maps its own vocabulary
 * onto them.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Count, decodedRows } from "./rows.ts"

export const DeliveryLogRow = Schema.Struct({
  id: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  state: Schema.String,
  recipient: Schema.String,
  subject: Schema.String,
  from_email: Schema.String,
  message_id: Schema.String,
  request_id: Schema.String,
  key_id: Schema.String,
  attempts: Schema.Int,
  last_code: Schema.NullOr(Schema.Int),
  last_status: Schema.NullOr(Schema.String),
  last_reply: Schema.NullOr(Schema.String)
})
export type DeliveryLogRow = typeof DeliveryLogRow.Type

/**
 * A row of the log's cursor, decoded as the export's stream passes it: synchronously (no effect
 * per row of an export of hundreds of thousands), and a row that does not decode is a defect.
 */
export const decodeDeliveryLogRow: (row: unknown) => DeliveryLogRow = Schema.decodeUnknownSync(DeliveryLogRow)

/** What the log can be ordered by (then by delivery id, the same way, so pages are stable). */
const ORDER_COLUMNS = { created_at: "d.created_at", recipient: "d.recipient", subject: "coalesce(d.rendered_subject, m.subject)", state: "d.state" } as const
export type DeliveryLogOrder = keyof typeof ORDER_COLUMNS

export interface DeliveryLogFilter {
  readonly keyIds: ReadonlyArray<string>
  readonly states: ReadonlyArray<string>
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  /** A substring of the recipient or the subject, any case. */
  readonly search?: string | undefined
  readonly messageId?: string | undefined
  readonly orderBy: DeliveryLogOrder
  readonly direction: "asc" | "desc"
}

/** The log's statements over one SqlClient (the audit's; the export compiles them for its own pool). */
export const deliveryLog = (sql: SqlClient.SqlClient) => {
  const conditions = (f: DeliveryLogFilter) => {
    const pattern = f.search === undefined ? undefined : `%${f.search.replace(/[\\%_]/g, "\\$&")}%`
    return sql.and([
      sql`d.key_id IN ${sql.in(f.keyIds)}`,
      sql`d.state IN ${sql.in(f.states)}`,
      ...(f.from === undefined ? [] : [sql`d.created_at >= ${f.from}`]),
      ...(f.to === undefined ? [] : [sql`d.created_at <= ${f.to}`]),
      ...(pattern === undefined ? [] : [sql`(d.recipient ILIKE ${pattern} OR coalesce(d.rendered_subject, m.subject) ILIKE ${pattern})`]),
      ...(f.messageId === undefined ? [] : [sql`d.message_id = ${f.messageId}`])
    ])
  }

  const ordering = (f: DeliveryLogFilter) => {
    const direction = f.direction === "asc" ? "ASC" : "DESC"
    return sql.literal(`${ORDER_COLUMNS[f.orderBy]} ${direction}, d.id ${direction}`)
  }

  /** Every matching row in order: a statement, for a cursor (rows not yet decoded: `decodeDeliveryLogRow`). */
  const select = (f: DeliveryLogFilter) =>
    sql`SELECT d.id, d.created_at, d.updated_at, d.state, d.recipient, coalesce(d.rendered_subject, m.subject) AS subject, m.from_email, d.message_id,
            m.request_id, d.key_id, d.attempts, d.last_code, d.last_status, d.last_reply
          FROM deliveries d JOIN messages m ON m.id = d.message_id
          WHERE ${conditions(f)} ORDER BY ${ordering(f)}`

  /** How many rows match. */
  const count = (f: DeliveryLogFilter) =>
    decodedRows(
      Schema.Struct({ total: Count }),
      sql`SELECT count(*) AS total FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE ${conditions(f)}`
    ).pipe(Effect.map((rows) => rows[0]?.total ?? 0))

  /** One page of the matching rows, decoded. */
  const page = (f: DeliveryLogFilter, limit: number, offset: number) =>
    decodedRows(DeliveryLogRow, sql`${select(f)} LIMIT ${limit} OFFSET ${offset}`)

  return { select, count, page } as const
}
