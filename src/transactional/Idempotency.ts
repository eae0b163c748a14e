/**
 * Idempotency-Key for sends: the first request's response is stored with its rows (same
 * transaction) and replayed for 24 h to a request with the same key and the same body; the same
 * key with a different body is a conflict (409 idempotency_key_reused). Sandbox requests neither
 * store nor read records (the spec's rule).
 *
 * The record keeps the answered body's text, not its value: a jsonb object comes back with its keys
 * reordered (jsonb sorts them), and docs/sending.md promises the replay byte for byte. The text is kept
 * as a JSON string in the jsonb column; a record written before holds the object, and is answered
 * through the same encoding as a first answer.
 */
import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Schema } from "effect"
import { SendResponse } from "./send/Api.ts"

// Built once, not per request.
const encodeResponse = Schema.encodeSync(SendResponse)
const decodeResponse = Schema.decodeUnknownEither(SendResponse)

/**
 * The 202's body as it goes over the wire: the schema's encoding serialized as HttpApi does
 * (JSON.stringify). The first answer and the stored record are both this text.
 */
export const sendResponseText = (response: typeof SendResponse.Type): string => JSON.stringify(encodeResponse(response))

const storedText = (response: unknown): string => {
  if (typeof response === "string") return response
  const decoded = decodeResponse(response)
  return Either.isRight(decoded) ? sendResponseText(decoded.right) : JSON.stringify(response)
}

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000

export const hashBody = (raw: string): Buffer => createHash("sha256").update(raw, "utf8").digest()

export type Replay =
  /** `response`: the exact text first answered. */
  | { readonly _tag: "replay"; readonly status: number; readonly response: string }
  | { readonly _tag: "conflict" }

export class Idempotency extends Effect.Service<Idempotency>()("herald/Idempotency", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const lookup = (keyId: string, key: string, hash: Buffer, now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ request_hash: Buffer; status: number; response: unknown }>`
          SELECT request_hash, status, response FROM idempotency_keys
          WHERE key_id = ${keyId} AND idempotency_key = ${key}
            AND created_at > ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)}`
        const row = rows[0]
        if (row === undefined) return Option.none<Replay>()
        return Option.some<Replay>(
          row.request_hash.equals(hash)
            ? { _tag: "replay", status: row.status, response: storedText(row.response) }
            : { _tag: "conflict" }
        )
      })

    /**
     * Inside the send's transaction. A concurrent twin blocks on the primary key until this commits;
     * an expired record (older than the window) is replaced.
     */
    const record = (keyId: string, key: string, hash: Buffer, status: number, response: typeof SendResponse.Type, now: Date) =>
      sql`
        INSERT INTO idempotency_keys (key_id, idempotency_key, request_hash, status, response, created_at)
        VALUES (${keyId}, ${key}, ${hash}, ${status}, to_jsonb(${sendResponseText(response)}::text), ${now})
        ON CONFLICT (key_id, idempotency_key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
          status = EXCLUDED.status, response = EXCLUDED.response, created_at = EXCLUDED.created_at
        WHERE idempotency_keys.created_at <= ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)}
        RETURNING key_id`.pipe(Effect.map((rows) => rows.length > 0))

    return { lookup, record } as const
  })
}) {}
