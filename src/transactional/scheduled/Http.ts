import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { ScheduledGroup } from "./Api.ts"
import { conflict, notFound } from "../../http/errors.ts"
import { ScheduledSends } from "./ScheduledSends.ts"

const notFoundError = { ScheduledNotFound: (e: { id: string }) => Effect.fail(notFound(`No scheduled send ${e.id}`)) }

export const ScheduledHttpLive = HttpApiBuilder.group(groupApi(ScheduledGroup), "scheduled", (handlers) =>
  Effect.gen(function*() {
    const scheduled = yield* ScheduledSends
    return handlers
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => scheduled.get(me.accountId, path.id)).pipe(
          Effect.catchTags({ ...notFoundError, SqlError: Effect.die })
        ))
      .handle("cancel", ({ path }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          return yield* scheduled.cancel(me.accountId, path.id, new Date(yield* Clock.currentTimeMillis))
        }).pipe(Effect.catchTags({
          ...notFoundError,
          ScheduledNotCancellable: (e) =>
            Effect.fail(conflict(`Scheduled send ${e.id} is ${e.status}; only a scheduled send can be cancelled`)),
          SqlError: Effect.die
        })))
  }))
