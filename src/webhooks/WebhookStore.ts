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
import { outboxRow } from "../events/outbox.ts"
import type { HeraldEvent } from "../events/schema.ts"
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

/**
 * A delivery held by a replica: what an attempt needs, with its key's webhook settings as they
 * are now. The body is the payload as PostgreSQL prints jsonb (`{"id": "evt_…", …}`), the same
 * bytes on every attempt, read as text rather than parsed and serialised again per attempt.
 */
export interface HeldDelivery {
  readonly id: string
  readonly key_id: string
  readonly event_id: string
  readonly status: DeliveryRow["status"]
  readonly attempts: number
  readonly body: string
  readonly created_at: Date
  readonly webhook_url: string | null
  readonly webhook_secret: string | null
}

/** The columns of a HeldDelivery, from `webhook_deliveries w` joined with `api_keys k`. */
const HELD = "w.id, w.key_id, w.event_id, w.status, w.attempts, w.payload::text AS body, w.created_at, k.webhook_url, k.webhook_secret"

/** A finished dispatcher attempt as recordMany writes it (times in epoch milliseconds). */
export interface Outcome {
  readonly id: string
  readonly owner: string
  readonly attempted_at: number
  readonly duration_ms: number
  readonly http_code: number | null
  readonly error: string | null
  readonly response_body: string
  readonly status: DeliveryRow["status"]
  readonly next_attempt_at: number
  readonly ladder: 0 | 1
  readonly updated_at: number
}

const byCreated = (a: HeldDelivery, b: HeldDelivery) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1)

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

/**
 * The body a receiver gets, built in SQL from an event row aliased `e`: `id`, `event`, `ts` (the
 * event's time, ISO 8601 to the millisecond, as JavaScript writes it), `app` (the key) and the fields.
 * The one place a body is built: its shape is `receiverBody` in src/events/schema.ts (the common
 * fields there, the event's own fields as the outbox writer encoded them), which the documents show.
 */
const RECEIVER_BODY = `jsonb_build_object('id', e.id, 'event', e.event,
  'ts', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'app', e.key_id) || e.payload`

const deliveryIds = (n: number) => Array.from({ length: n }, () => newId("whd"))

/** Times travel as epoch milliseconds (no ISO text to format per attempt); exact, unlike to_timestamp's float seconds. */
const EPOCH = "timestamptz 'epoch'"

/** A one-row FROM item that makes the statement's own transaction commit asynchronously. */
const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit"

const ATTEMPTS_MADE = "(SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = w.id) AS attempts_made"

export class WebhookStore extends Effect.Service<WebhookStore>()("herald/WebhookStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The dispatcher's hot statements (fan-out, claims, give-backs, attempt records) are named
    // (src/db/prepared.ts): PostgreSQL planned each afresh per call, 0.5–1 ms for a claim
    // (pg_stat_statements, docs/benchmarks.md "Where the time goes"); their texts never vary.

    /**
     * Turns up to `batch` undispatched events into deliveries for keys with a webhook URL, in one
     * statement. A key given room in `ahead` (a key this replica is delivering to right now, and
     * successfully) has up to that many of its new deliveries leased to `owner` at once — unless
     * the key already has due deliveries waiting, which go first — and those come back to be
     * attempted without a claim: under load that saves a row version and a round trip per event.
     * The rest are due now for whoever claims them. Answers how many events were dispatched, how
     * many deliveries they made, and the leased ones. The body is RECEIVER_BODY.
     */
    const fanOut = (now: Date, batch: number, ahead: { readonly owner: string; readonly leaseUntil: Date; readonly room: ReadonlyMap<string, number> }) =>
      sql<{ events: number; deliveries: number } & Partial<HeldDelivery>>`/* herald:prepared */
        WITH picked AS (
          SELECT id, key_id, account_id, event, payload, created_at FROM events
          WHERE dispatched_at IS NULL ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED
        ), marked AS (
          -- By primary key: joined to the CTE instead, the planner hashed it against a scan of every event ever written.
          UPDATE events SET dispatched_at = ${now} WHERE id = ANY(ARRAY(SELECT id FROM picked))
        ), numbered AS (
          SELECT p.*, row_number() OVER (ORDER BY p.created_at, p.id) AS n,
            row_number() OVER (PARTITION BY p.key_id ORDER BY p.created_at, p.id) AS rank_in_key
          FROM picked p JOIN api_keys k ON k.id = p.key_id WHERE k.webhook_url IS NOT NULL
        ), room AS (
          SELECT r.key AS key_id, r.value::int AS room FROM jsonb_each_text(${JSON.stringify(Object.fromEntries(ahead.room))}::jsonb) r
          -- A subquery per key (its index), not an anti-join that may read every key's due rows.
          WHERE (SELECT 1 FROM webhook_deliveries w WHERE w.key_id = r.key AND w.status = 'pending' AND w.next_attempt_at <= ${now} LIMIT 1) IS NULL
        ), inserted AS (
          INSERT INTO webhook_deliveries (id, key_id, account_id, event_id, event, payload, next_attempt_at, lease_owner, created_at, updated_at)
          SELECT (${deliveryIds(batch)}::text[])[e.n], e.key_id, e.account_id, e.id, e.event, ${sql.literal(RECEIVER_BODY)},
            CASE WHEN e.leased THEN ${ahead.leaseUntil}::timestamptz ELSE ${now}::timestamptz END,
            CASE WHEN e.leased THEN ${ahead.owner} END, ${now}, ${now}
          FROM (SELECT nb.*, nb.rank_in_key <= coalesce(room.room, 0) AS leased FROM numbered nb LEFT JOIN room USING (key_id)) e
          RETURNING id, key_id, event_id, status, attempts, payload::text AS body, created_at, lease_owner
        )
        SELECT c.events, c.deliveries, held.id, held.key_id, held.event_id, held.status, held.attempts, held.body, held.created_at, held.webhook_url, held.webhook_secret
        FROM (SELECT (SELECT count(*)::int FROM picked) AS events, (SELECT count(*)::int FROM inserted) AS deliveries) c
        LEFT JOIN (
          SELECT i.*, k.webhook_url, k.webhook_secret, p.created_at AS event_at
          FROM inserted i JOIN api_keys k ON k.id = i.key_id JOIN picked p ON p.id = i.event_id WHERE i.lease_owner IS NOT NULL
        ) held ON true, ${sql.literal(ASYNC_COMMIT)}
        ORDER BY held.event_at`.pipe(Effect.map((rows) => ({
        events: rows[0]?.events ?? 0,
        deliveries: rows[0]?.deliveries ?? 0,
        leased: rows.filter((r): r is { events: number; deliveries: number } & HeldDelivery => r.id !== null && r.id !== undefined)
      })))

    /**
     * An event written to the outbox and fanned out to the key's endpoint in one statement (the
     * webhook.test event): the dispatcher delivers it like any other.
     */
    const enqueue = (keyId: string, accountId: string, emitted: HeraldEvent, now: Date) =>
      Effect.gen(function*() {
        const { event, payload: fields } = outboxRow(emitted)
        const eventId = newId("evt")
        const deliveryId = newId("whd")
        yield* sql`
          WITH e AS (
            INSERT INTO events (id, account_id, key_id, event, payload, created_at, dispatched_at)
            VALUES (${eventId}, ${accountId}, ${keyId}, ${event}, ${JSON.stringify(fields)}::jsonb, ${now}, ${now})
            RETURNING id, key_id, event, payload, created_at
          )
          INSERT INTO webhook_deliveries (id, key_id, account_id, event_id, event, payload, next_attempt_at, created_at, updated_at)
          SELECT ${deliveryId}, e.key_id, ${accountId}, e.id, e.event, ${sql.literal(RECEIVER_BODY)}, ${now}, ${now}, ${now} FROM e`
        return { eventId, deliveryId }
      })

    /**
     * Leases up to `limit` due deliveries, oldest due first, at most `perKey` per key less what
     * this replica already holds of that key (`held`): a slow or dead receiver cannot take the
     * slots of other keys. The conditions are repeated where rows are locked, so a row another
     * replica claimed meanwhile is skipped, never claimed twice.
     */
    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number, perKey: number, held: ReadonlyMap<string, number>) => {
      const heldJson = JSON.stringify(Object.fromEntries(held))
      return sql<HeldDelivery>`/* herald:prepared */
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
        RETURNING ${sql.literal(HELD)}`
    }

    /**
     * How many events wait to be fanned out, up to `limit` (one cheap read of the partial index
     * before the fan-out, which then draws exactly that many delivery ids).
     */
    const undispatched = (limit: number) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT 1 FROM events WHERE dispatched_at IS NULL LIMIT ${limit}) e`.pipe(
        Effect.map((r) => r[0]?.n ?? 0)
      )

    /** Extends the lease of a delivery this replica holds (between burst attempts), re-reading the key. */
    const renew = (id: string, owner: string, leaseUntil: Date) =>
      sql<HeldDelivery>`
        UPDATE webhook_deliveries w SET next_attempt_at = ${leaseUntil} FROM api_keys k, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id = ${id} AND w.lease_owner = ${owner} AND w.status = 'pending' AND k.id = w.key_id
        RETURNING ${sql.literal(HELD)}`.pipe(Effect.map((r) => r[0]))

    /**
     * Leases up to `limit` of one key's due deliveries, oldest due first (a key's worker taking
     * more work). Ordered by the index's own order and nothing else: a tie-break on `id` made the
     * planner sort every due row of the key that shares a due time (a fan-out writes 200 alike),
     * measured 7–10 ms against 1 ms for a claim of 16 from a backlog of 5,000.
     */
    const claimBatch = (owner: string, keyId: string, now: Date, leaseUntil: Date, limit: number) =>
      sql<HeldDelivery>`/* herald:prepared */
        UPDATE webhook_deliveries w SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        FROM (
          SELECT id FROM webhook_deliveries WHERE key_id = ${keyId} AND status = 'pending' AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
        ) due, api_keys k, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id = due.id AND k.id = w.key_id
        RETURNING ${sql.literal(HELD)}`.pipe(Effect.map((rows) => [...rows].sort(byCreated)))

    /** Gives held deliveries back (not started, or shutting down): due at `at` for whoever claims them next. */
    const release = (ids: ReadonlyArray<string>, owner: string, at: Date) =>
      ids.length === 0 ? Effect.void : sql`/* herald:prepared */
        UPDATE webhook_deliveries SET lease_owner = NULL, next_attempt_at = ${at} FROM ${sql.literal(ASYNC_COMMIT)}
        WHERE id = ANY(${ids}::text[]) AND lease_owner = ${owner} AND status = 'pending'`.pipe(Effect.asVoid)

    /**
     * Records finished attempts of the dispatcher — each attempt and its delivery's new state —
     * in one statement for many deliveries (rows no longer held by `owner` keep their state). The
     * id list lets the planner look the rows up by key instead of scanning the table; it is one
     * array parameter, not one parameter per id, so the statement's text is the same for every
     * batch (a `sql.in` of 40 ids made a statement PostgreSQL parsed afresh for each batch size).
     */
    const recordMany = (outcomes: ReadonlyArray<Outcome>) =>
      sql`/* herald:prepared */
        WITH o AS (
          SELECT r.id, r.owner, ${sql.literal(EPOCH)} + r.attempted_at * interval '1 millisecond' AS attempted_at, r.duration_ms,
            r.http_code, r.error, r.response_body, r.status, ${sql.literal(EPOCH)} + r.next_attempt_at * interval '1 millisecond' AS next_attempt_at,
            r.ladder, ${sql.literal(EPOCH)} + r.updated_at * interval '1 millisecond' AS updated_at
          FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb) AS r(
            id text, owner text, attempted_at bigint, duration_ms int, http_code int, error text, response_body text,
            status text, next_attempt_at bigint, ladder int, updated_at bigint)
        ), attempt AS (
          INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_code, error, response_body)
          SELECT id, attempted_at, duration_ms, http_code, error, response_body FROM o
        )
        UPDATE webhook_deliveries w SET attempts = w.attempts + o.ladder, status = o.status, next_attempt_at = o.next_attempt_at,
          http_code = o.http_code, last_error = o.error, response_body = o.response_body, updated_at = o.updated_at, lease_owner = NULL
        FROM o, ${sql.literal(ASYNC_COMMIT)}
        WHERE w.id = ANY(${outcomes.map((x) => x.id)}::text[]) AND w.id = o.id AND w.lease_owner = o.owner`.pipe(Effect.asVoid)

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
          WHERE w.id = ${id} AND k.id = w.key_id RETURNING ${sql.literal(HELD)}`
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

    /** The key's backlog: deliveries still pending (first attempt or a retry to come), by webhook_deliveries_key_due. */
    const backlog = (keyId: string) =>
      sql<{ pending: number; oldest: Date | null }>`SELECT count(*)::int AS pending, min(created_at) AS oldest
        FROM webhook_deliveries WHERE key_id = ${keyId} AND status = 'pending'`.pipe(Effect.map((r) => r[0] ?? { pending: 0, oldest: null }))

    const attempts = (id: string) =>
      sql<{ attempted_at: Date; duration_ms: number; http_code: number | null; error: string | null; response_body: string | null }>`
        SELECT attempted_at, duration_ms, http_code, error, response_body FROM webhook_attempts
        WHERE delivery_id = ${id} ORDER BY attempted_at, id`

    return { fanOut, undispatched, enqueue, claim, claimBatch, renew, release, record, recordMany, takeForRetry, list, find, backlog, attempts } as const
  })
}) {}
