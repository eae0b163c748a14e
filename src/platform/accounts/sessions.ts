/**
 * The console's sign-in sessions (`console_sessions`, issue 28). A session id is 32 random bytes
 * the browser holds in an HttpOnly cookie; the table keeps only its SHA-256, so reading the
 * database signs no one in, and a lookup compares digests inside the primary key's index. The rows
 * live in PostgreSQL, not in a process, so every replica honours a sign-out at once.
 *
 * A session acts as one of its account's keys (`active_key_id`): /v1 treats a request with the
 * cookie as that key's (src/http/auth.ts, through the SessionLookup port). It ends when its row
 * goes: sign-out, a password change and a suspension delete the account's rows (`endSessionsOf`,
 * which Accounts calls); a session idle for HERALD_CONSOLE_SESSION_IDLE_HOURS is refused, and
 * swept at a later sign-in.
 */
import { createHash, randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"

/**
 * How often a session in use records that it was seen: at most once a minute (not a write per
 * request), and more often only when the idle limit itself is shorter than two minutes.
 */
const TOUCH_INTERVAL_MS = 60_000
/**
 * Sessions one account keeps at once; a sign-in past it ends the longest idle. Bounds the rows a
 * holder of the password can make (each sign-in is also a scrypt check, two at a time).
 */
export const MAX_SESSIONS_PER_ACCOUNT = 20
/** Expired sessions a sign-in sweeps, so one statement never grows with a backlog. */
const SWEEP_BATCH = 500

export class SessionKeyNotAllowed extends Data.TaggedError("SessionKeyNotAllowed")<{ readonly keyId: string }> {}

/** A live session, as its cookie's holder is. */
export interface ConsoleSession {
  readonly idHash: Buffer
  readonly accountId: string
  readonly activeKeyId: string
  /** False when the active key was revoked since: the console must switch before it calls /v1. */
  readonly keyActive: boolean
  readonly isAdmin: boolean
  readonly csrfToken: string
}

export interface SessionView {
  readonly account: { readonly id: string; readonly name: string; readonly email: string; readonly is_admin: boolean }
  readonly keys: ReadonlyArray<{ readonly id: string; readonly label: string }>
  readonly active_key_id: string
  readonly csrf_token: string
}

export const hashSessionId = (sessionId: string): Buffer => createHash("sha256").update(sessionId, "utf8").digest()

const randomToken = () => randomBytes(32).toString("base64url")

/** Ends every session of `accountId`: for the account's owner (a password change, a suspension). */
export const endSessionsOf = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`DELETE FROM console_sessions WHERE account_id = ${accountId} RETURNING 1 AS n`, (rows) => rows.length))

export class ConsoleSessions extends Effect.Service<ConsoleSessions>()("herald/ConsoleSessions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { consoleSessionIdleMs: idleMs } = yield* AppConfig
    const touchEveryMs = Math.min(TOUCH_INTERVAL_MS, idleMs / 2)

    /** The account an email signs in to (any case), with what a sign-in checks. */
    const credentialsOf = (email: string) =>
      Effect.map(
        sql<{ id: string; password_hash: string; status: string }>`
          SELECT id, password_hash, status FROM accounts WHERE lower(email) = lower(${email})
          ORDER BY created_at, id LIMIT 1`,
        (rows) => Option.fromNullable(rows[0])
      )

    /** A new session of `accountId` acting as `keyId`: its id (for the cookie) and CSRF token. */
    const start = (accountId: string, keyId: string) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const sessionId = randomToken()
        const csrfToken = randomToken()
        yield* sql`DELETE FROM console_sessions WHERE id_hash IN (
            SELECT id_hash FROM console_sessions WHERE last_seen_at < ${new Date(now.getTime() - idleMs)} LIMIT ${SWEEP_BATCH})`
        yield* sql`INSERT INTO console_sessions (id_hash, account_id, active_key_id, csrf_token, created_at, last_seen_at)
          VALUES (${hashSessionId(sessionId)}, ${accountId}, ${keyId}, ${csrfToken}, ${now}, ${now})`
        yield* sql`DELETE FROM console_sessions WHERE account_id = ${accountId} AND id_hash NOT IN (
            SELECT id_hash FROM console_sessions WHERE account_id = ${accountId}
            ORDER BY last_seen_at DESC LIMIT ${MAX_SESSIONS_PER_ACCOUNT})`
        return { sessionId, csrfToken }
      })

    /**
     * The live session `sessionId` names: none when unknown, ended, idle too long or its account
     * suspended. Records that it was seen when the last record is older than the touch interval.
     */
    const find = (sessionId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const idHash = hashSessionId(sessionId)
        const rows = yield* sql<{
          account_id: string; active_key_id: string; csrf_token: string; is_admin: boolean; key_active: boolean
          last_seen_at: Date
        }>`
          SELECT s.account_id, s.active_key_id, s.csrf_token, a.is_admin, s.last_seen_at,
            EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.active_key_id AND k.revoked_at IS NULL) AS key_active
          FROM console_sessions s JOIN accounts a ON a.id = s.account_id AND a.status = 'active'
          WHERE s.id_hash = ${idHash} AND s.last_seen_at > ${new Date(now - idleMs)}`
        const row = rows[0]
        if (row === undefined) return Option.none<ConsoleSession>()
        if (now - row.last_seen_at.getTime() >= touchEveryMs) {
          yield* sql`UPDATE console_sessions SET last_seen_at = ${new Date(now)} WHERE id_hash = ${idHash}`
        }
        const session: ConsoleSession = {
          idHash,
          accountId: row.account_id,
          activeKeyId: row.active_key_id,
          keyActive: row.key_active,
          isAdmin: row.is_admin,
          csrfToken: row.csrf_token
        }
        return Option.some(session)
      })

    /** What GET /console/session answers: the account, its active keys (by label) and the session's. */
    const view = (session: ConsoleSession) =>
      Effect.gen(function*() {
        const [account] = yield* sql<{ id: string; name: string; email: string; is_admin: boolean }>`
          SELECT id, name, email, is_admin FROM accounts WHERE id = ${session.accountId}`
        const keys = yield* sql<{ id: string; label: string }>`
          SELECT id, label FROM api_keys WHERE account_id = ${session.accountId} AND revoked_at IS NULL
          ORDER BY created_at, id`
        const answer: SessionView = {
          account: account!,
          keys,
          active_key_id: session.activeKeyId,
          csrf_token: session.csrfToken
        }
        return answer
      })

    /** The session acts as `keyId` from now on: one of its account's active keys, else SessionKeyNotAllowed. */
    const switchKey = (session: ConsoleSession, keyId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql`
          UPDATE console_sessions SET active_key_id = ${keyId}
          WHERE id_hash = ${session.idHash}
            AND EXISTS (SELECT 1 FROM api_keys WHERE id = ${keyId} AND account_id = ${session.accountId} AND revoked_at IS NULL)
          RETURNING 1`
        if (rows.length === 0) return yield* new SessionKeyNotAllowed({ keyId })
        return { ...session, activeKeyId: keyId, keyActive: true }
      })

    const end = (session: ConsoleSession) => Effect.asVoid(sql`DELETE FROM console_sessions WHERE id_hash = ${session.idHash}`)

    return { credentialsOf, start, find, view, switchKey, end } as const
  })
}) {}
