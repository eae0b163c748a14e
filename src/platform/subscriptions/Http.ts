import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { SubscriptionsGroup } from "./Api.ts"
import { BadRequestError, forbidden, notFound } from "../../http/errors.ts"
import { Usage } from "../usage/Usage.ts"
import { Subscriptions } from "./Subscriptions.ts"

const incorrectPassword = () => Effect.fail(forbidden("The password is incorrect", "incorrect_password"))

export const SubscriptionsHttpLive = HttpApiBuilder.group(groupApi(SubscriptionsGroup), "subscriptions", (handlers) =>
  Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    const usage = yield* Usage
    return handlers
      .handle("changePlan", ({ payload }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          const now = new Date(yield* Clock.currentTimeMillis)
          return yield* subscriptions.changePlan(me.accountId, me.keyId, payload.package_id, payload.password, now)
        }).pipe(Effect.catchTags({
          IncorrectPassword: incorrectPassword,
          PlanChangeRefused: (e) =>
            Effect.fail(new BadRequestError({ type: "invalid_request_error", code: e.code, message: e.message, param: "package_id" })),
          SqlError: Effect.die
        })))
      .handle("cancelPendingChange", ({ payload }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* subscriptions.cancelPendingChange(me.accountId, payload.password, now)
          return yield* usage.record(me.accountId, now)
        }).pipe(Effect.catchTags({
          IncorrectPassword: incorrectPassword,
          NothingPending: () => Effect.fail(notFound("No plan change is pending for this account")),
          AccountMissing: Effect.die,
          SqlError: Effect.die
        })))
  }))
