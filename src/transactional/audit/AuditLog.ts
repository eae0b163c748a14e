/**
 * The audit log of sends: one item per recipient delivery, newest first. `event` speaks the spec's
 * vocabulary: queued (accepted, not yet delivered — deferrals included, with the last reply),
 * sent (the recipient's MX accepted it), failed (bounced, rejected or expired, with the reason).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { ExportDatabase } from "../../db/export-database.ts"
import { type Narrowing, withStatementTimeout } from "../../db/statement-timeout.ts"
import type { AuditItem } from "./Api.ts"

export type AuditEvent = "queued" | "sent" | "failed"
export const AUDIT_EVENTS: ReadonlyArray<AuditEvent> = ["queued", "sent", "failed"]

const STATES: Record<AuditEvent, ReadonlyArray<string>> = {
  queued: ["queued", "deferred"],
  sent: ["sent"],
  failed: ["bounced", "failed"]
}

export const SORT_COLUMNS = { ts: "d.created_at", recipient: "d.recipient", subject: "m.subject", event: "d.state" } as const
export type SortColumn = keyof typeof SORT_COLUMNS

export interface AuditQuery {
  /** The keys whose deliveries are visible (the caller's account's, or an admin's chosen client's). */
  readonly keyIds: ReadonlyArray<string>
  readonly events: ReadonlyArray<AuditEvent>
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly search?: string | undefined
  /** Only this message's deliveries (an exact message_id; `search` keeps its substring meaning). */
  readonly messageId?: string | undefined
  readonly sortBy: SortColumn
  readonly sortDir: "asc" | "desc"
}

interface Row {
  readonly id: string
  readonly created_at: Date
  readonly updated_at: Date
  readonly state: string
  readonly recipient: string
  readonly subject: string
  readonly from_email: string
  readonly message_id: string
  readonly request_id: string
  readonly key_id: string
  readonly attempts: number
  readonly last_code: number | null
  readonly last_status: string | null
  readonly last_reply: string | null
}

const eventOf = (state: string): AuditEvent => (state === "sent" ? "sent" : state === "queued" || state === "deferred" ? "queued" : "failed")

const item = (row: Row): AuditItem => ({
  id: row.id,
  ts: row.created_at.toISOString(),
  event: eventOf(row.state),
  recipient: row.recipient,
  subject: row.subject,
  from: row.from_email,
  message_id: row.message_id,
  request_id: row.request_id,
  app: row.key_id,
  attempts: row.attempts,
  smtp_code: row.last_code,
  smtp_status: row.last_status,
  smtp_reply: row.last_reply,
  updated_at: row.updated_at.toISOString()
})

export class AuditLog extends Effect.Service<AuditLog>()("herald/AuditLog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const exports = yield* ExportDatabase
    const { queryTimeoutMs } = yield* AppConfig

    /** What to narrow when the read hits HERALD_QUERY_TIMEOUT_MS (the filters that cut the rows read). */
    const narrowing = (q: AuditQuery): Narrowing => ({
      param: q.search === undefined ? "from" : "search",
      message: `The audit query took longer than ${queryTimeoutMs} ms: narrow it with from and to, event or app`
        + (q.search === undefined ? "" : ", or a longer search")
    })

    const conditions = (q: AuditQuery) => {
      const states = (q.events.length === 0 ? AUDIT_EVENTS : q.events).flatMap((e) => STATES[e])
      const pattern = q.search === undefined ? undefined : `%${q.search.replace(/[\\%_]/g, "\\$&")}%`
      return sql.and([
        sql`d.key_id IN ${sql.in(q.keyIds)}`,
        sql`d.state IN ${sql.in(states)}`,
        ...(q.from === undefined ? [] : [sql`d.created_at >= ${q.from}`]),
        ...(q.to === undefined ? [] : [sql`d.created_at <= ${q.to}`]),
        ...(pattern === undefined ? [] : [sql`(d.recipient ILIKE ${pattern} OR m.subject ILIKE ${pattern})`]),
        ...(q.messageId === undefined ? [] : [sql`d.message_id = ${q.messageId}`])
      ])
    }

    const ordering = (q: AuditQuery) =>
      sql.literal(`${SORT_COLUMNS[q.sortBy]} ${q.sortDir === "asc" ? "ASC" : "DESC"}, d.id ${q.sortDir === "asc" ? "ASC" : "DESC"}`)

    const select = (q: AuditQuery) =>
      sql<Row>`SELECT d.id, d.created_at, d.updated_at, d.state, d.recipient, m.subject, m.from_email, d.message_id,
            m.request_id, d.key_id, d.attempts, d.last_code, d.last_status, d.last_reply
          FROM deliveries d JOIN messages m ON m.id = d.message_id
          WHERE ${conditions(q)} ORDER BY ${ordering(q)}`

    /** One page of the matching deliveries, and how many match in all. */
    const search = (q: AuditQuery, page: { readonly limit: number; readonly offset: number }) =>
      Effect.gen(function*() {
        if (q.keyIds.length === 0) return { total: 0, items: [] as Array<AuditItem> }
        const [count] = yield* sql<{ total: string }>`
          SELECT count(*) AS total FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE ${conditions(q)}`
        const rows = yield* sql<Row>`${select(q)} LIMIT ${page.limit} OFFSET ${page.offset}`
        return { total: Number(count?.total ?? 0), items: rows.map(item) }
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, narrowing(q)))

    /**
     * Every matching delivery, in the same order, read through a server-side cursor a batch at a
     * time (the CSV export): memory stays bounded whatever the account's size, the response's
     * backpressure pauses the reads, and the one statement sees one snapshot (no row twice or
     * missed while deliveries change state). On the exports' own pool, one export of the account
     * at a time (src/db/export-database.ts), until the scope (the request's) closes.
     */
    const stream = (accountId: string, q: AuditQuery) =>
      q.keyIds.length === 0
        ? Effect.succeed(Stream.empty)
        : Effect.map(exports.open(accountId, select(q), narrowing(q)), Stream.map(item))

    /** Every key of an account (revoked ones too: their deliveries stay in the log). */
    const keysOfAccount = (accountId: string) =>
      sql<{ id: string }>`SELECT id FROM api_keys WHERE account_id = ${accountId}`.pipe(
        Effect.map((rows) => rows.map((r) => r.id))
      )

    return { search, stream, keysOfAccount } as const
  })
}) {}
