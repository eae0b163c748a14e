/**
 * The SqlClient of the appliance: `DATABASE_URL` when set, otherwise the embedded cluster under
 * `HERALD_DATA_DIR` (started inside this layer's scope, so it stops after every user of the pool).
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { startEmbeddedPostgres } from "./embedded-postgres.ts"

export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = Option.isSome(config.databaseUrl)
      ? config.databaseUrl.value
      : Redacted.make((yield* startEmbeddedPostgres(config.dataDir)).url)
    return PgClient.layer({
      url,
      maxConnections: config.dbPoolMax,
      connectTimeout: Duration.seconds(5),
      idleTimeout: Duration.seconds(30),
      applicationName: "herald"
    })
  })
)
