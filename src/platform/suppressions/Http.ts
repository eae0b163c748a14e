import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { SuppressionsGroup } from "./Api.ts"
import { notFound } from "../../http/errors.ts"
import { Suppressions } from "./Suppressions.ts"

export const SuppressionsHttpLive = HttpApiBuilder.group(groupApi(SuppressionsGroup), "suppressions", (handlers) =>
  Effect.gen(function*() {
    const suppressions = yield* Suppressions
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => suppressions.list(me.accountId, urlParams)).pipe(Effect.orDie))
      .handle("add", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => suppressions.add(me.accountId, payload.email, payload.reason, "api")).pipe(
          Effect.orDie
        ))
      // The router has decoded the path segment already: decoding it again would read an address's
      // own `%` as an escape (a wrong address, or a URIError and a 500).
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => suppressions.remove(me.accountId, path.email)).pipe(
          Effect.catchTags({
            SuppressionNotFound: (e) => Effect.fail(notFound(`${e.email} is not on this account's suppression list`)),
            SqlError: Effect.die
          })
        ))
  }))
