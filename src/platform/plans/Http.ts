import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { groupApi } from "../../http/group-api.ts"
import { PlansGroup } from "./Api.ts"
import { listPlans } from "./Plans.ts"

export const PlansHttpLive = HttpApiBuilder.group(groupApi(PlansGroup), "plans", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("list", () =>
      listPlans.pipe(
        Effect.map((items) => ({ items })),
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.orDie
      ))
  }))
