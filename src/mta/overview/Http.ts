import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { queryTooExpensive } from "../../http/errors.ts"
import { groupApi } from "../../http/group-api.ts"
import { AdminQueueGroup } from "./Api.ts"
import { QueueOverview } from "./QueueOverview.ts"

export const AdminQueueHttpLive = HttpApiBuilder.group(groupApi(AdminQueueGroup), "adminQueue", (handlers) =>
  Effect.gen(function*() {
    const overview = yield* QueueOverview
    return handlers.handle("list", ({ urlParams: { limit, offset } }) =>
      overview.current.pipe(
        Effect.map((snapshot) => ({
          generated_at: snapshot.generated_at,
          total: snapshot.total,
          limit,
          offset,
          items: snapshot.items.slice(offset, offset + limit)
        })),
        Effect.catchTags({ QueryTooExpensive: (e) => Effect.fail(queryTooExpensive(e.message, e.param)), SqlError: Effect.die })
      ))
  }))
