/**
 * API keys: creation (token shown once), lookup by token digest, listing, renaming, revocation.
 * A key belongs to one account; the key id is the spec's `app`. Lookups go through a short-lived
 * cache that every key change empties (key-cache.ts). A key's webhook URL and secret are set by
 * src/webhooks/WebhookEndpoints.ts, the one writer of those two columns.
 *
 * An account has at most HERALD_MAX_KEYS_PER_ACCOUNT active keys: each key is a rate window, a
 * webhook endpoint and a row every lookup may read, so a key holder must not make them without end.
 * Revoking a key frees its place.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Data, Effect, Option, Queue } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { newId } from "../../lib/ids.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import type { Principal } from "../../http/key-lookup.ts"
import type { CreatedKey, KeyView } from "./Api.ts"
import { type CachedKey, makeKeyCache } from "./key-cache.ts"
import { generateToken, hashToken, tokenHint } from "./tokens.ts"

/** `last_used_at` is kept to the minute: a busy key costs one UPDATE a minute, not one per request. */
export const LAST_USED_GRANULARITY_MS = 60_000

export class KeyNotFound extends Data.TaggedError("KeyNotFound")<{ readonly id: string }> {}
/** The key exists but belongs to another account (the spec answers 403 for these). */
export class KeyNotYours extends Data.TaggedError("KeyNotYours")<{ readonly id: string }> {}
/** The account has HERALD_MAX_KEYS_PER_ACCOUNT active keys already (the API answers 409). */
export class TooManyKeys extends Data.TaggedError("TooManyKeys")<{
  readonly accountId: string
  readonly max: number
  readonly message: string
}> {}

interface KeyRow {
  readonly id: string
  readonly account_id: string
  readonly label: string
  readonly token_hint: string
  readonly webhook_url: string | null
  readonly created_at: Date
  readonly last_used_at: Date | null
}

const view = (row: KeyRow): KeyView => ({
  id: row.id,
  label: row.label,
  token_hint: row.token_hint,
  webhook_url: row.webhook_url,
  created_at: row.created_at.toISOString(),
  last_used_at: row.last_used_at?.toISOString() ?? null
})

export class ApiKeys extends Effect.Service<ApiKeys>()("herald/ApiKeys", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { maxKeysPerAccount } = yield* AppConfig
    const cache = makeKeyCache<Principal>()
    // A key or an admin flag changed somewhere (a trigger's NOTIFY, migration 0012): forget all.
    const changes = yield* (yield* QueueSignal).subscribe("herald_keys")
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(changes), Effect.sync(cache.clear))))

    /**
     * Records that a key was used, at most once a minute per key: a conditional UPDATE forked off
     * the request, so it never slows a request down and its failure never fails one.
     */
    const touch = (key: CachedKey<Principal>, now: number) =>
      Effect.gen(function*() {
        const { lastUsedAt } = key
        if (lastUsedAt !== null && now - lastUsedAt.getTime() < LAST_USED_GRANULARITY_MS) return
        key.lastUsedAt = new Date(now)
        const id = key.principal.keyId
        const stale = new Date(now - LAST_USED_GRANULARITY_MS)
        yield* sql`
          UPDATE api_keys SET last_used_at = ${new Date(now)}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${stale})`.pipe(
          Effect.catchAllCause((cause) => Effect.logDebug("could not record a key's last use", cause)),
          Effect.forkDaemon
        )
      })

    /** The key of `digest` from the database, remembered in the cache (and recognized) when found. */
    const lookUp = (cacheKey: string, digest: Buffer, now: number) =>
      Effect.gen(function*() {
        const readAt = cache.generation()
        const rows = yield* sql<{ id: string; account_id: string; is_admin: boolean; last_used_at: Date | null }>`
          SELECT k.id, k.account_id, a.is_admin, k.last_used_at
          FROM api_keys k JOIN accounts a ON a.id = k.account_id
          WHERE k.token_hash = ${digest} AND k.revoked_at IS NULL`
        const row = rows[0]
        if (row === undefined) {
          cache.unrecognize(cacheKey)
          return Option.none<Principal>()
        }
        const key: CachedKey<Principal> = {
          principal: { keyId: row.id, accountId: row.account_id, isAdmin: row.is_admin },
          lastUsedAt: row.last_used_at
        }
        cache.set(cacheKey, key, now, readAt)
        cache.recognize(cacheKey, now)
        yield* touch(key, now)
        return Option.some(key.principal)
      })

    /**
     * Who `token` is: from the cache, else from the database when `mayLookUp` says so — always for
     * `authenticate`; under a client address's failed-authentication count (`authenticateSparingly`),
     * only for a token recognized as valid here before, or when the count allows (src/http/auth.ts).
     */
    const identify = (token: string, mayLookUp: Effect.Effect<boolean, SqlError.SqlError>) =>
      Effect.gen(function*() {
        if (token.length === 0 || token.length > 200) return Option.none<Principal>()
        const now = yield* Clock.currentTimeMillis
        const digest = hashToken(token)
        // Keyed by the digest, never the token: no timing of the lookup says anything about a token.
        const cacheKey = digest.toString("base64")
        const cached = cache.get(cacheKey, now)
        if (cached !== undefined) {
          yield* touch(cached, now)
          return Option.some(cached.principal)
        }
        if (!cache.recognizes(cacheKey, now) && !(yield* mayLookUp)) return Option.none<Principal>()
        return yield* lookUp(cacheKey, digest, now)
      })

    const authenticate = (token: string) => identify(token, Effect.succeed(true))

    /** `authenticate` without a database lookup for an unknown token unless `mayLookUp` grants one. */
    const authenticateSparingly = (token: string, mayLookUp: Effect.Effect<boolean, SqlError.SqlError>) => identify(token, mayLookUp)

    /**
     * Inserts a key with the given token or a fresh random one, whatever the account has: for
     * start-up's own keys (bootstrap), which must never be refused. Everything else calls `create`.
     */
    const install = (accountId: string, label: string, token: string = generateToken()) =>
      Effect.gen(function*() {
        const id = newId("key")
        const rows = yield* sql<{ created_at: Date }>`
          INSERT INTO api_keys (id, account_id, label, token_hash, token_hint)
          VALUES (${id}, ${accountId}, ${label}, ${hashToken(token)}, ${tokenHint(token)})
          RETURNING created_at`
        const created: CreatedKey = { id, label, token, created_at: rows[0]!.created_at.toISOString() }
        return created
      })

    /** A new key with a fresh token, unless the account has its most active keys already. */
    const create = (accountId: string, label: string) =>
      sql.withTransaction(Effect.gen(function*() {
        // Key creations of one account wait for each other here, so the count stays true until the
        // insert: concurrent creations cannot pass the cap together. (NO KEY UPDATE: the lock does
        // not hold up the inserts of other tables that merely reference the account.)
        yield* sql`SELECT 1 FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`
        const counted = yield* sql<{ active: number }>`
          SELECT count(*)::integer AS active FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL`
        if (counted[0]!.active >= maxKeysPerAccount) {
          return yield* new TooManyKeys({
            accountId,
            max: maxKeysPerAccount,
            message: `The account has ${maxKeysPerAccount} active keys, the most it may have ` +
              `(HERALD_MAX_KEYS_PER_ACCOUNT); revoke one to make another`
          })
        }
        return yield* install(accountId, label)
      }))

    const findOwned = (accountId: string, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<KeyRow>`
          SELECT id, account_id, label, token_hint, webhook_url, created_at, last_used_at
          FROM api_keys WHERE id = ${id} AND revoked_at IS NULL`
        const row = rows[0]
        if (row === undefined) return yield* new KeyNotFound({ id })
        if (row.account_id !== accountId) return yield* new KeyNotYours({ id })
        return row
      })

    const list = (accountId: string) =>
      sql<KeyRow>`
        SELECT id, account_id, label, token_hint, webhook_url, created_at, last_used_at
        FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL
        ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map(view)))

    const get = (accountId: string, id: string) => Effect.map(findOwned(accountId, id), view)

    const rename = (accountId: string, id: string, label: string) =>
      Effect.gen(function*() {
        yield* findOwned(accountId, id)
        yield* sql`UPDATE api_keys SET label = ${label} WHERE id = ${id}`
        return { id, label }
      })

    const revoke = (accountId: string, id: string, now: Date) =>
      Effect.gen(function*() {
        yield* findOwned(accountId, id)
        yield* sql`UPDATE api_keys SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL`
        // This process forgets at once; the trigger's NOTIFY tells the other replicas.
        cache.clear()
      })

    /** The operator's revocation (CLI): any account's key; revoking twice keeps the first time. */
    const revokeById = (id: string, now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ account_id: string; revoked_at: Date }>`
          UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${id}
          RETURNING account_id, revoked_at`
        const row = rows[0]
        if (row === undefined) return yield* new KeyNotFound({ id })
        cache.clear()
        return { id, account_id: row.account_id, revoked_at: row.revoked_at.toISOString() }
      })

    /** Start-up's own key comes back when HERALD_BOOTSTRAP_KEY still names it (bootstrap.ts). */
    const reinstate = (id: string) => Effect.asVoid(sql`UPDATE api_keys SET revoked_at = NULL WHERE id = ${id}`)

    return { authenticate, authenticateSparingly, install, create, list, get, rename, revoke, revokeById, reinstate } as const
  }),
  // The same layer value as the appliance's own: one QueueSignal (layers are shared by reference).
  dependencies: [QueueSignal.Default]
}) {}
