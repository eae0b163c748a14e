import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { UsageGroup } from "./Api.ts"
import { Usage } from "./Usage.ts"

export const UsageHttpLive = HttpApiBuilder.group(groupApi(UsageGroup), "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* Usage
    return handlers.handle("get", () =>
      Effect.gen(function*() {
        const me = yield* CurrentKey
        return yield* usage.record(me.accountId, new Date(yield* Clock.currentTimeMillis))
      }).pipe(Effect.orDie))
  }))
