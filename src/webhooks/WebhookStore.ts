/**
 * Webhook deliveries in PostgreSQL: fan-out of outbox events into deliveries, leased claims of
 * due ones, attempts on record, and the history the API shows. A webhook endpoint is its key: the
 * endpoint id is the key id.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { newId } from "../lib/ids.ts"
import type { AttemptResult } from "./post.ts"

export interface DeliveryRow {
  readonly id: string
  readonly key_id: string
  readonly account_id: string
  readonly event_id: string
  readonly event: string
  readonly payload: Record<string, unknown>
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly http_code: number | null
  readonly last_error: string | null
  readonly response_body: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const deliveryView = (d: DeliveryRow) => ({
  id: d.id,
  event: d.event,
  event_id: d.event_id,
  status: d.status,
  http_code: d.http_code,
  attempts: d.attempts,
  error: d.last_error,
  next_attempt_at: d.status === "pending" ? d.next_attempt_at.toISOString() : null,
  created_at: d.created_at.toISOString(),
  updated_at: d.updated_at.toISOString()
})

export class WebhookStore extends Effect.Service<WebhookStore>()("herald/WebhookStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Turns undispatched events into deliveries for keys with a webhook URL; returns how many events. */
    const fanOut = (now: Date, batch = 200) =>
      sql.withTransaction(Effect.gen(function*() {
        const events = yield* sql<{ id: string; key_id: string; account_id: string; event: string; payload: Record<string, unknown>; created_at: Date; webhook_url: string | null }>`
          SELECT e.id, e.key_id, e.account_id, e.event, e.payload, e.created_at, k.webhook_url
          FROM events e JOIN api_keys k ON k.id = e.key_id
          WHERE e.dispatched_at IS NULL ORDER BY e.created_at LIMIT ${batch} FOR UPDATE OF e SKIP LOCKED`
        if (events.length === 0) return 0
        const withUrl = events.filter((e) => e.webhook_url !== null)
        if (withUrl.length > 0) {
          yield* sql`INSERT INTO webhook_deliveries ${sql.insert(withUrl.map((e) => ({
            id: newId("whd"),
            key_id: e.key_id,
            account_id: e.account_id,
            event_id: e.id,
            event: e.event,
            payload: JSON.stringify({ id: e.id, event: e.event, ts: e.created_at.toISOString(), app: e.key_id, ...e.payload }),
            next_attempt_at: now,
            created_at: now,
            updated_at: now
          })))}`
        }
        yield* sql`UPDATE events SET dispatched_at = ${now} WHERE id IN ${sql.in(events.map((e) => e.id))}`
        return events.length
      }))

    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number) =>
      sql<DeliveryRow>`
        UPDATE webhook_deliveries w SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        FROM (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}
              ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
        WHERE w.id = due.id RETURNING w.*`

    /** Records an attempt and the delivery's new state in one transaction. */
    const record = (
      id: string,
      result: AttemptResult,
      next: { readonly status: DeliveryRow["status"]; readonly nextAttemptAt: Date },
      now: Date
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_code, error, response_body)
          VALUES (${id}, ${now}, ${result.durationMs}, ${result.httpCode}, ${result.error}, ${result.responseBody})`
        const [row] = yield* sql<DeliveryRow>`
          UPDATE webhook_deliveries SET attempts = attempts + 1, status = ${next.status}, next_attempt_at = ${next.nextAttemptAt},
            http_code = ${result.httpCode}, last_error = ${result.error}, response_body = ${result.responseBody},
            updated_at = ${now}, lease_owner = NULL
          WHERE id = ${id} RETURNING *`
        return row!
      }))

    /** A new delivery made on the spot (webhook.test). */
    const create = (keyId: string, accountId: string, event: string, fields: Record<string, unknown>, now: Date, leaseUntil: Date) =>
      Effect.gen(function*() {
        const eventId = newId("evt")
        const payload = { id: eventId, event, ts: now.toISOString(), app: keyId, ...fields }
        const [row] = yield* sql<DeliveryRow>`
          INSERT INTO webhook_deliveries (id, key_id, account_id, event_id, event, payload, next_attempt_at, created_at, updated_at)
          VALUES (${newId("whd")}, ${keyId}, ${accountId}, ${eventId}, ${event}, ${JSON.stringify(payload)}::jsonb, ${leaseUntil}, ${now}, ${now})
          RETURNING *`
        return row!
      })

    const list = (keyId: string, filter: { status?: string | undefined; limit: number; offset: number }) =>
      Effect.gen(function*() {
        const where = sql.and([sql`key_id = ${keyId}`, ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`])])
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`
        const rows = yield* sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`
        return { total: count?.n ?? 0, items: rows.map(deliveryView) }
      })

    const find = (keyId: string, id: string) =>
      sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE id = ${id} AND key_id = ${keyId}`.pipe(Effect.map((r) => r[0]))

    const attempts = (id: string) =>
      sql<{ attempted_at: Date; duration_ms: number; http_code: number | null; error: string | null; response_body: string | null }>`
        SELECT attempted_at, duration_ms, http_code, error, response_body FROM webhook_attempts
        WHERE delivery_id = ${id} ORDER BY attempted_at, id`

    /** Makes a delivery due again now (a manual retry), whatever its status. */
    const reopen = (id: string, now: Date, leaseUntil: Date) =>
      sql<DeliveryRow>`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${leaseUntil}, updated_at = ${now}
        WHERE id = ${id} RETURNING *`.pipe(Effect.map((r) => r[0]!))

    return { fanOut, claim, record, create, list, find, attempts, reopen } as const
  })
}) {}
