/**
 * Webhook deliveries in PostgreSQL: fan-out of outbox events into deliveries, leased claims of
 * due ones (fair across keys), attempts on record, and the history the API shows. A webhook
 * endpoint is its key: the endpoint id is the key id.
 *
 * Columns as this module uses them: `attempts` counts the ladder's attempts (manual retries are
 * recorded in webhook_attempts but do not move a delivery along the ladder); `next_attempt_at` is
 * the due time, and while a replica holds the delivery (`lease_owner` set) the end of its lease.
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
  readonly lease_owner: string | null
  readonly http_code: number | null
  readonly last_error: string | null
  readonly response_body: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** A delivery held by a replica, with its key's webhook settings as they are now. */
export interface HeldDelivery extends DeliveryRow {
  readonly webhook_url: string | null
  readonly webhook_secret: string | null
}

/** A finished dispatcher attempt as recordMany writes it (times as ISO strings). */
export interface Outcome {
  readonly id: string
  readonly owner: string
  readonly attempted_at: string
  readonly duration_ms: number
  readonly http_code: number | null
  readonly error: string | null
  readonly response_body: string
  readonly status: DeliveryRow["status"]
  readonly next_attempt_at: string
  readonly ladder: 0 | 1
  readonly updated_at: string
}

const byCreated = (a: DeliveryRow, b: DeliveryRow) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1)

/** A row of the history: the delivery and how many attempts it has on record (manual ones too). */
export interface HistoryRow extends DeliveryRow {
  readonly attempts_made: number
}

export const deliveryView = (d: HistoryRow) => ({
  id: d.id,
  event: d.event,
  event_id: d.event_id,
  status: d.status,
  http_code: d.http_code,
  attempts: d.attempts_made,
  error: d.last_error,
  next_attempt_at: d.status === "pending" ? d.next_attempt_at.toISOString() : null,
  created_at: d.created_at.toISOString(),
  updated_at: d.updated_at.toISOString()
})

/** The body a receiver gets: `id`, `event`, `ts` (the event's time), `app` (the key) and the fields. */
const bodyOf = (eventId: string, event: string, at: Date, keyId: string, fields: Record<string, unknown>) =>
  JSON.stringify({ id: eventId, event, ts: at.toISOString(), app: keyId, ...fields })

/** A one-row FROM item that makes the statement's own transaction commit asynchronously. */
const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit"

const ATTEMPTS_MADE = "(SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = w.id) AS attempts_made"

export class WebhookStore extends Effect.Service<WebhookStore>()("herald/WebhookStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Turns undispatched events into deliveries for keys with a webhook URL; returns how many events. */
    const fanOut = (now: Date, batch = 200) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL synchronous_commit = off`
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
            payload: bodyOf(e.id, e.event, e.created_at, e.key_id, e.payload),
            next_attempt_at: now,
            created_at: now,
            updated_at: now
          })))}`
        }
        yield* sql`UPDATE events SET dispatched_at = ${now} WHERE id IN ${sql.in(events.map((e) => e.id))}`
        return events.length
      }))

    /**
     * An event written to the outbox and fanned out to the key's endpoint in one transaction (the
     * webhook.test event): the dispatcher delivers it like any other.
     */
    const enqueue = (keyId: string, accountId: string, event: string, fields: Record<string, unknown>, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const eventId = newId("evt")
        const deliveryId = newId("whd")
        yield* sql`INSERT INTO events (id, account_id, key_id, event, payload, created_at, dispatched_at)
          VALUES (${eventId}, ${accountId}, ${keyId}, ${event}, ${JSON.stringify(fields)}::jsonb, ${now}, ${now})`
        yield* sql`INSERT INTO webhook_deliveries (id, key_id, account_id, event_id, event, payload, next_attempt_at, created_at, updated_at)
          VALUES (${deliveryId}, ${keyId}, ${accountId}, ${eventId}, ${event}, ${bodyOf(eventId, event, now, keyId, fields)}::jsonb, ${now}, ${now}, ${now})`
        return { eventId, deliveryId }
      }))

    /**
     * Leases up to `limit` due deliveries, oldest due first, at most `perKey` per key less what
     * this replica already holds of that key (`held`): a slow or dead receiver cannot take the
     * slots of other keys. The conditions are repeated where rows are locked, so a row another
     * replica claimed meanwhile is skipped, never claimed twice.
     */
    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number, perKey: number, held: ReadonlyMap<string, number>) => {
      const heldJson = JSON.stringify(Object.fromEntries(held))
      return sql<HeldDelivery>`
        UPDATE webhook_deliveries w SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        FROM (
          SELECT id FROM webhook_deliveries
          WHERE id IN (
            SELECT c.id FROM (
              SELECT id, key_id, next_attempt_at, row_number() OVER (PARTITION BY key_id ORDER BY next_attempt_at, id) AS rn,
                COALESCE((${heldJson}::jsonb ->> key_id)::int, 0) AS held
              FROM webhook_deliveries
              WHERE status = 'pending' AND next_attempt_at <= ${now}
                AND COALESCE((${heldJson}::jsonb ->> key_id)::int, 0) < ${perKey}
            ) c
            WHERE c.rn <= ${perKey} - c.held
            ORDER BY c.next_attempt_at, c.id LIMIT ${limit}
          ) AND status = 'pending' AND next_attempt_at <= ${now}
          FOR UPDATE SKIP LOCKED
        ) due, api_keys k, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id = due.id AND k.id = w.key_id
        RETURNING w.*, k.webhook_url, k.webhook_secret`
    }

    /** Whether the outbox has events not yet fanned out (one cheap read before the transaction). */
    const hasUndispatched = sql<{ waiting: boolean }>`
      SELECT EXISTS (SELECT 1 FROM events WHERE dispatched_at IS NULL) AS waiting`.pipe(Effect.map((r) => r[0]?.waiting === true))

    /** Extends the lease of a delivery this replica holds (between burst attempts), re-reading the key. */
    const renew = (id: string, owner: string, leaseUntil: Date) =>
      sql<HeldDelivery>`
        UPDATE webhook_deliveries w SET next_attempt_at = ${leaseUntil} FROM api_keys k, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id = ${id} AND w.lease_owner = ${owner} AND w.status = 'pending' AND k.id = w.key_id
        RETURNING w.*, k.webhook_url, k.webhook_secret`.pipe(Effect.map((r) => r[0]))

    /** Leases up to `limit` of one key's due deliveries, oldest first (a key's worker taking more work). */
    const claimBatch = (owner: string, keyId: string, now: Date, leaseUntil: Date, limit: number) =>
      sql<HeldDelivery>`
        UPDATE webhook_deliveries w SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        FROM (
          SELECT id FROM webhook_deliveries WHERE key_id = ${keyId} AND status = 'pending' AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED
        ) due, api_keys k, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id = due.id AND k.id = w.key_id
        RETURNING w.*, k.webhook_url, k.webhook_secret`.pipe(Effect.map((rows) => [...rows].sort(byCreated)))

    /** Gives held deliveries back (not started, or shutting down): due at `at` for whoever claims them next. */
    const release = (ids: ReadonlyArray<string>, owner: string, at: Date) =>
      ids.length === 0 ? Effect.void : sql`
        UPDATE webhook_deliveries SET lease_owner = NULL, next_attempt_at = ${at} FROM ${sql.literal(ASYNC_COMMIT)}
        WHERE id IN ${sql.in(ids)} AND lease_owner = ${owner} AND status = 'pending'`.pipe(Effect.asVoid)

    /**
     * Records finished attempts of the dispatcher — each attempt and its delivery's new state —
     * in one statement for many deliveries (rows no longer held by `owner` keep their state). The
     * id list lets the planner look the rows up by key instead of scanning the table.
     */
    const recordMany = (outcomes: ReadonlyArray<Outcome>) =>
      sql`
        WITH o AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb) AS o(
            id text, owner text, attempted_at timestamptz, duration_ms int, http_code int, error text, response_body text,
            status text, next_attempt_at timestamptz, ladder int, updated_at timestamptz)
        ), attempt AS (
          INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_code, error, response_body)
          SELECT id, attempted_at, duration_ms, http_code, error, response_body FROM o
        )
        UPDATE webhook_deliveries w SET attempts = w.attempts + o.ladder, status = o.status, next_attempt_at = o.next_attempt_at,
          http_code = o.http_code, last_error = o.error, response_body = o.response_body, updated_at = o.updated_at, lease_owner = NULL
        FROM o, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id IN ${sql.in(outcomes.map((x) => x.id))} AND w.id = o.id AND w.lease_owner = o.owner`.pipe(Effect.asVoid)

    /**
     * Records an attempt and the delivery's new state in one statement, if `owner` still holds the
     * delivery (the attempt is on record either way). `ladder`: the attempt counts as a step of the
     * ladder; `holdFor`: keep the lease (a burst retry follows in this replica); `durable`: wait
     * for the WAL flush (an answer the API gives depends on it).
     */
    const record = (
      id: string,
      owner: string,
      attemptedAt: Date,
      result: AttemptResult,
      next: { readonly status: DeliveryRow["status"]; readonly nextAttemptAt: Date; readonly ladder: boolean; readonly holdFor: string | null },
      now: Date,
      durable = false
    ) =>
      sql<DeliveryRow>`
        WITH attempt AS (
          INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_code, error, response_body)
          VALUES (${id}, ${attemptedAt}, ${result.durationMs}, ${result.httpCode}, ${result.error}, ${result.responseBody})
        )
        UPDATE webhook_deliveries SET attempts = attempts + ${next.ladder ? 1 : 0}, status = ${next.status},
          next_attempt_at = ${next.nextAttemptAt}, http_code = ${result.httpCode}, last_error = ${result.error},
          response_body = ${result.responseBody}, updated_at = ${now}, lease_owner = ${next.holdFor}
        ${durable ? sql`` : sql`FROM ${sql.literal(ASYNC_COMMIT)}`}
        WHERE id = ${id} AND lease_owner = ${owner} RETURNING webhook_deliveries.*`.pipe(Effect.map((r) => r[0]))

    /**
     * Takes a delivery for a manual retry: undefined when unknown, "busy" while an attempt or burst
     * of it runs, else the row (with the key's settings) and the due time to restore on failure.
     */
    const takeForRetry = (keyId: string, id: string, owner: string, now: Date, leaseUntil: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const [old] = yield* sql<{ next_attempt_at: Date; busy: boolean }>`
          SELECT next_attempt_at, (lease_owner IS NOT NULL AND next_attempt_at > ${now}) AS busy
          FROM webhook_deliveries WHERE id = ${id} AND key_id = ${keyId} FOR UPDATE`
        if (old === undefined) return undefined
        if (old.busy) return "busy" as const
        const [row] = yield* sql<HeldDelivery>`
          UPDATE webhook_deliveries w SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil} FROM api_keys k
          WHERE w.id = ${id} AND k.id = w.key_id RETURNING w.*, k.webhook_url, k.webhook_secret`
        return { row: row!, previousDue: old.next_attempt_at }
      }))

    const list = (keyId: string, filter: { status?: string | undefined; limit: number; offset: number }) =>
      Effect.gen(function*() {
        const where = sql.and([sql`w.key_id = ${keyId}`, ...(filter.status === undefined ? [] : [sql`w.status = ${filter.status}`])])
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries w WHERE ${where}`
        const rows = yield* sql<HistoryRow>`SELECT w.*, ${sql.literal(ATTEMPTS_MADE)} FROM webhook_deliveries w WHERE ${where}
          ORDER BY w.created_at DESC, w.id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`
        return { total: count?.n ?? 0, items: rows.map(deliveryView) }
      })

    const find = (keyId: string, id: string) =>
      sql<HistoryRow>`SELECT w.*, ${sql.literal(ATTEMPTS_MADE)} FROM webhook_deliveries w
        WHERE w.id = ${id} AND w.key_id = ${keyId}`.pipe(Effect.map((r) => r[0]))

    const attempts = (id: string) =>
      sql<{ attempted_at: Date; duration_ms: number; http_code: number | null; error: string | null; response_body: string | null }>`
        SELECT attempted_at, duration_ms, http_code, error, response_body FROM webhook_attempts
        WHERE delivery_id = ${id} ORDER BY attempted_at, id`

    return { fanOut, hasUndispatched, enqueue, claim, claimBatch, renew, release, record, recordMany, takeForRetry, list, find, attempts } as const
  })
}) {}
