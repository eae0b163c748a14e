import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import { queryTooExpensive } from "../../http/errors.ts"
import { groupApi } from "../../http/group-api.ts"
import { AdminInboundGroup } from "./Api.ts"
import { listInbound } from "./reports.ts"

export const AdminInboundHttpLive = HttpApiBuilder.group(groupApi(AdminInboundGroup), "adminInbound", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { queryTimeoutMs } = yield* AppConfig
    return handlers.handle("list", ({ urlParams: p }) =>
      listInbound({ refused: p.refused === undefined ? undefined : p.refused === "true", limit: p.limit, offset: p.offset }).pipe(
        withStatementTimeout(sql, queryTimeoutMs, { param: "offset", message: "Listing inbound mail took too long; page from a smaller offset" }),
        Effect.map((page) => ({ ...page, limit: p.limit, offset: p.offset })),
        Effect.catchTags({ QueryTooExpensive: (e) => Effect.fail(queryTooExpensive(e.message, e.param)), SqlError: Effect.die })
      ))
  }))
