import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { MessagesGroup } from "./Api.ts"
import { notFound } from "../../http/errors.ts"
import { MessageLookup } from "./MessageLookup.ts"

export const MessagesHttpLive = HttpApiBuilder.group(groupApi(MessagesGroup), "messages", (handlers) =>
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
