/**
 * Where CSV exports (the audit log, a campaign's per-recipient analytics) read from: a small pool of
 * their own, one export per account at a time.
 *
 * An export reads through a server-side cursor and holds its connection until the client has taken
 * the last row: a client that stops reading holds it under back-pressure. On the main pool, ten such
 * clients took all ten connections (issue 26 finding 3): `/health` answered 503 and every other
 * account's sends and reads failed until the sockets closed. Here:
 * - exports never touch the main pool: `HERALD_EXPORT_POOL_MAX` connections (default 3) of their
 *   own, so the worst they can do is make other exports wait;
 * - one export per account runs at a time (the next one waits its turn), so one account cannot take
 *   the whole export pool and shut the others' exports out — a per-account limit alone would still
 *   let several accounts together empty the main pool, hence both;
 * - the HTTP side ends a download whose client takes nothing for `HERALD_EXPORT_WRITE_TIMEOUT_S`
 *   (src/http/export-response.ts), which closes the cursor and frees its connection;
 * - each statement (each cursor fetch) stops after `HERALD_QUERY_TIMEOUT_MS` (a session setting of
 *   this pool), and the first batch is read before the answer starts, so an export too expensive
 *   to start is a 422 `query_too_expensive`, not a cut-off body.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { PgClient } from "@effect/sql-pg"
import { Chunk, Effect, Option, Redacted, type Scope, Stream } from "effect"
import pg from "pg"
import { AppConfig } from "../config/app-config.ts"
import { isStatementTimeout, type Narrowing, QueryTooExpensive } from "./statement-timeout.ts"

/** The exports' connections show under this name in pg_stat_activity. */
export const EXPORT_APPLICATION_NAME = "herald-export"

export class ExportDatabase extends Effect.Service<ExportDatabase>()("herald/ExportDatabase", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const main = yield* PgClient.PgClient
    const { url, host, port, username, password, database } = main.config
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const created = new pg.Pool({
          ...(url === undefined
            ? { host, port, user: username, password: password === undefined ? undefined : Redacted.value(password), database }
            : { connectionString: Redacted.value(url) }),
          max: config.exportPoolMax,
          idleTimeoutMillis: 30_000,
          connectionTimeoutMillis: 5_000,
          application_name: EXPORT_APPLICATION_NAME,
          statement_timeout: config.queryTimeoutMs
        })
        // A connection lost while idle: the pool drops it and makes another on the next export.
        created.on("error", () => undefined)
        return created
      }),
      (created) => Effect.promise(() => created.end().catch(() => undefined))
    )
    const client = yield* PgClient.fromPool({ acquire: Effect.succeed(pool), applicationName: EXPORT_APPLICATION_NAME }).pipe(
      Effect.provide(Reactivity.layer)
    )
    const pooled = yield* Effect.makeSemaphore(config.exportPoolMax)
    const perAccount = new Map<string, Effect.Semaphore>()
    const gateOf = (accountId: string) => {
      let gate = perAccount.get(accountId)
      if (gate === undefined) perAccount.set(accountId, (gate = Effect.unsafeMakeSemaphore(1)))
      return gate
    }

    /** A permit of `semaphore` until the scope closes; waiting for it can be interrupted (the client left). */
    const holdPermit = (semaphore: Effect.Semaphore) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(restore(semaphore.take(1)), Effect.addFinalizer(() => semaphore.release(1))))

    /**
     * The rows of `statement` (built with the main client; only its text and parameters are used)
     * as a stream read through a cursor on this pool, for as long as the scope (the request's) is
     * open. The first batch is read here: a statement that hits the timeout fails now, as
     * `QueryTooExpensive` described by `narrow`.
     */
    const open = <A extends object>(
      accountId: string,
      statement: Statement<A>,
      narrow: Narrowing
    ): Effect.Effect<Stream.Stream<A, SqlError>, QueryTooExpensive | SqlError, Scope.Scope> =>
      Effect.gen(function*() {
        yield* holdPermit(gateOf(accountId))
        yield* holdPermit(pooled)
        const connection = yield* client.reserve
        const [text, params] = statement.compile()
        const pull = yield* Stream.toPull(connection.executeStream(text, params, undefined) as Stream.Stream<A, SqlError>)
        let ended = false
        const first = yield* pull.pipe(
          Effect.catchAll((missing): Effect.Effect<Chunk.Chunk<A>, QueryTooExpensive | SqlError> => {
            if (Option.isNone(missing)) return Effect.sync(() => (ended = true, Chunk.empty<A>()))
            return isStatementTimeout(missing.value)
              ? Effect.fail(new QueryTooExpensive({ param: narrow.param, message: narrow.message, timeoutMs: config.queryTimeoutMs }))
              : Effect.fail(missing.value)
          })
        )
        const rest = Stream.repeatEffectChunkOption(Effect.suspend(() => (ended ? Effect.fail(Option.none()) : pull)))
        return Stream.concat(Stream.fromChunk(first), rest)
      })

    return { open } as const
  })
}) {}
