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
import { decodeDeliveryLogRow, deliveryLog, type DeliveryLogFilter, type DeliveryLogOrder, type DeliveryLogRow } from "../../mta/queue/read-models/delivery-log.ts"
import type { AuditItem } from "./Api.ts"

export type AuditEvent = "queued" | "sent" | "failed"
export const AUDIT_EVENTS: ReadonlyArray<AuditEvent> = ["queued", "sent", "failed"]

const STATES: Record<AuditEvent, ReadonlyArray<string>> = {
  queued: ["queued", "deferred"],
  sent: ["sent"],
  failed: ["bounced", "failed"]
}

/** The audit's sort fields, as the queue's delivery log orders. */
export const SORT_COLUMNS = { ts: "created_at", recipient: "recipient", subject: "subject", event: "state" } as const satisfies Record<string, DeliveryLogOrder>
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

const eventOf = (state: string): AuditEvent => (state === "sent" ? "sent" : state === "queued" || state === "deferred" ? "queued" : "failed")

const item = (row: DeliveryLogRow): AuditItem => ({
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

    const log = deliveryLog(sql)

    /** The audit's query in the queue's words: its events as delivery states. */
    const filterOf = (q: AuditQuery): DeliveryLogFilter => ({
      keyIds: q.keyIds,
      states: (q.events.length === 0 ? AUDIT_EVENTS : q.events).flatMap((e) => STATES[e]),
      from: q.from,
      to: q.to,
      search: q.search,
      messageId: q.messageId,
      orderBy: SORT_COLUMNS[q.sortBy],
      direction: q.sortDir
    })

    /** One page of the matching deliveries, and how many match in all. */
    const search = (q: AuditQuery, page: { readonly limit: number; readonly offset: number }) =>
      Effect.gen(function*() {
        if (q.keyIds.length === 0) return { total: 0, items: [] as Array<AuditItem> }
        const total = yield* log.count(filterOf(q))
        const rows = yield* log.page(filterOf(q), page.limit, page.offset)
        return { total, items: rows.map(item) }
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
        : Effect.map(exports.open(accountId, log.select(filterOf(q)), narrowing(q)), Stream.map((row) => item(decodeDeliveryLogRow(row))))

    /** Every key of an account (revoked ones too: their deliveries stay in the log). */
    const keysOfAccount = (accountId: string) =>
      sql<{ id: string }>`SELECT id FROM api_keys WHERE account_id = ${accountId}`.pipe(
        Effect.map((rows) => rows.map((r) => r.id))
      )

    return { search, stream, keysOfAccount } as const
  })
}) {}
