/**
 * The audit log of sends: one item per recipient delivery, newest first. `event` speaks the spec's
 * vocabulary: queued (accepted, not yet delivered — deferrals included, with the last reply),
 * sent (the recipient's MX accepted it), failed (bounced, rejected or expired, with the reason).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

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
  readonly sortBy: SortColumn
  readonly sortDir: "asc" | "desc"
  /** undefined = every row (CSV export). */
  readonly page?: { readonly limit: number; readonly offset: number } | undefined
}

export interface AuditItem {
  readonly id: string
  readonly ts: string
  readonly event: AuditEvent
  readonly recipient: string
  readonly subject: string
  readonly from: string
  readonly message_id: string
  readonly request_id: string
  readonly app: string
  readonly attempts: number
  readonly smtp_code: number | null
  readonly smtp_status: string | null
  readonly smtp_reply: string | null
  readonly updated_at: string
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

    const search = (q: AuditQuery) =>
      Effect.gen(function*() {
        if (q.keyIds.length === 0) return { total: 0, items: [] as Array<AuditItem> }
        const states = (q.events.length === 0 ? AUDIT_EVENTS : q.events).flatMap((e) => STATES[e])
        const pattern = q.search === undefined ? undefined : `%${q.search.replace(/[\\%_]/g, "\\$&")}%`
        const where = sql.and([
          sql`d.key_id IN ${sql.in(q.keyIds)}`,
          sql`d.state IN ${sql.in(states)}`,
          ...(q.from === undefined ? [] : [sql`d.created_at >= ${q.from}`]),
          ...(q.to === undefined ? [] : [sql`d.created_at <= ${q.to}`]),
          ...(pattern === undefined ? [] : [sql`(d.recipient ILIKE ${pattern} OR m.subject ILIKE ${pattern})`])
        ])
        const order = sql.literal(`${SORT_COLUMNS[q.sortBy]} ${q.sortDir === "asc" ? "ASC" : "DESC"}, d.id ${q.sortDir === "asc" ? "ASC" : "DESC"}`)
        const [count] = yield* sql<{ total: string }>`
          SELECT count(*) AS total FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE ${where}`
        const paging = q.page === undefined ? sql.literal("") : sql`LIMIT ${q.page.limit} OFFSET ${q.page.offset}`
        const rows = yield* sql<Row>`
          SELECT d.id, d.created_at, d.updated_at, d.state, d.recipient, m.subject, m.from_email, d.message_id,
            m.request_id, d.key_id, d.attempts, d.last_code, d.last_status, d.last_reply
          FROM deliveries d JOIN messages m ON m.id = d.message_id
          WHERE ${where} ORDER BY ${order} ${paging}`
        return { total: Number(count?.total ?? 0), items: rows.map(item) }
      })

    /** Every key of an account (revoked ones too: their deliveries stay in the log). */
    const keysOfAccount = (accountId: string) =>
      sql<{ id: string }>`SELECT id FROM api_keys WHERE account_id = ${accountId}`.pipe(
        Effect.map((rows) => rows.map((r) => r.id))
      )

    return { search, keysOfAccount } as const
  })
}) {}
