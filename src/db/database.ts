/**
 * The SqlClient of the appliance: `DATABASE_URL` when set, otherwise the embedded cluster under
 * `HERALD_DATA_DIR` (started inside this layer's scope, so it stops after every user of the pool).
 *
 * The `pg` pool is made here rather than inside PgClient.layer (the same settings and the same
 * start-up check) so that its counts (in use, idle, callers waiting) are readable: GET /metrics
 * reports them (src/lib/metrics.ts `herald_db_pool_connections`).
 */
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../config/app-config.ts"
import { startEmbeddedPostgres } from "./embedded-postgres.ts"
import { PreparingClient } from "./prepared.ts"

const CONNECT_TIMEOUT = Duration.seconds(5)
const IDLE_TIMEOUT = Duration.seconds(30)

/** What the pool's counts read, for metrics: connections open, idle ones, and callers waiting for one. */
export interface PoolCounts {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

/** The pool of this process's SqlClient, while it is open. */
let currentPool: PoolCounts | undefined

/** The counts of this process's pool now; undefined before it opened and after it ended. */
export const poolCounts = (): PoolCounts | undefined => currentPool

/** A pool checked with one query (as PgClient.layer does), ended with the scope. */
const openPool = (url: string, maxConnections: number) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new pg.Pool({
          connectionString: url,
          connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
          idleTimeoutMillis: Duration.toMillis(IDLE_TIMEOUT),
          max: maxConnections,
          application_name: "herald",
          // Sends the statements marked as hot as named (prepared) ones: prepared.ts.
          Client: PreparingClient
        })
        // An idle client's error (the server restarted) is the pool's to drop, not the process's to crash on.
        pool.on("error", () => {})
        try {
          await pool.query("SELECT 1")
        } catch (cause) {
          await pool.end().catch(() => {})
          throw cause
        }
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }).pipe(
      Effect.timeoutFail({
        duration: CONNECT_TIMEOUT,
        onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
      }),
      Effect.tap((pool) => Effect.sync(() => (currentPool = pool)))
    ),
    (pool) =>
      Effect.suspend(() => {
        if (currentPool === pool) currentPool = undefined
        return Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      })
  )

export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = Option.isSome(config.databaseUrl)
      ? config.databaseUrl.value
      : Redacted.make((yield* startEmbeddedPostgres(config.dataDir)).url)
    return PgClient.layerFromPool({ acquire: openPool(Redacted.value(url), config.dbPoolMax), applicationName: "herald" })
  })
)
