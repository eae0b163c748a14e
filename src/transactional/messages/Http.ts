import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { HeraldApi } from "../../http/api.ts"
import { notFound } from "../../http/errors.ts"
import { MessageLookup } from "./MessageLookup.ts"

export const MessagesHttpLive = HttpApiBuilder.group(HeraldApi, "messages", (handlers) =>
  Effect.gen(function*() {
    const lookup = yield* MessageLookup
    return handlers.handle("get", ({ path }) =>
      Effect.flatMap(CurrentKey, (me) => lookup.get(me.accountId, path.message_id)).pipe(
        Effect.catchTags({
          MessageNotFound: (e) => Effect.fail(notFound(`No message ${e.id}`)),
          SqlError: Effect.die
        })
      ))
  }))
