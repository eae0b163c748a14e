import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { VERSION } from "../../version.ts"
import { HeraldApi } from "../api.ts"
import { UnavailableError } from "../../http/errors.ts"

const databaseDown = (message: string) =>
  new UnavailableError({ type: "api_error", code: "database_unavailable", message })

/** The appliance's health: its database answers within 2 s, or the reason it does not. */
export const checkHealth = (sql: SqlClient.SqlClient) =>
  sql`SELECT 1`.pipe(
    Effect.timeoutFail({
      duration: Duration.seconds(2),
      onTimeout: () => databaseDown("the database did not answer within 2 s")
    }),
    Effect.catchTag("SqlError", (e) =>
      Effect.fail(databaseDown(`the database is unreachable: ${e.cause instanceof Error ? e.cause.message : e.message}`))),
    Effect.as({ status: "ok" as const, database: "ok" as const })
  )

export const MetaHttpLive = HttpApiBuilder.group(HeraldApi, "meta", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("version", () => Effect.succeed({ version: VERSION }))
      .handle("health", () => checkHealth(sql))
  }))
