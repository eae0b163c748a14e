import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { SubscriptionsGroup } from "./Api.ts"
import { BadRequestError, forbidden } from "../../http/errors.ts"
import { Subscriptions } from "./Subscriptions.ts"

export const SubscriptionsHttpLive = HttpApiBuilder.group(groupApi(SubscriptionsGroup), "subscriptions", (handlers) =>
  Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    return handlers.handle("changePlan", ({ payload }) =>
      Effect.gen(function*() {
        const me = yield* CurrentKey
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* subscriptions.changePlan(me.accountId, me.keyId, payload.package_id, payload.password, now)
      }).pipe(Effect.catchTags({
        IncorrectPassword: () => Effect.fail(forbidden("The password is incorrect", "incorrect_password")),
        PlanChangeRefused: (e) =>
          Effect.fail(new BadRequestError({ type: "invalid_request_error", code: e.code, message: e.message, param: "package_id" })),
        SqlError: Effect.die
      })))
  }))
