import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { KeysGroup } from "./Api.ts"
import { conflict, forbidden, notFound, validationFailed } from "../../http/errors.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { KeyWebhook } from "./key-webhook.ts"

/** The two ways a key id can be wrong, as the spec's statuses: unknown → 404, another's → 403. */
const ownership = {
  KeyNotFound: (e: { id: string }) => Effect.fail(notFound(`No key ${e.id}`)),
  KeyNotYours: (e: { id: string }) => Effect.fail(forbidden(`Key ${e.id} is not linked to this account`))
}

export const KeysHttpLive = HttpApiBuilder.group(groupApi(KeysGroup), "keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const webhook = yield* KeyWebhook
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => keys.create(me.accountId, payload.label)).pipe(
          Effect.catchTags({ TooManyKeys: (e) => Effect.fail(conflict(e.message)), SqlError: Effect.die })
        ))
      .handle("list", () =>
        Effect.flatMap(CurrentKey, (me) => keys.list(me.accountId)).pipe(
          Effect.map((items) => ({ items })),
          Effect.orDie
        ))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => keys.get(me.accountId, path.id)).pipe(
          Effect.catchTags(ownership),
          Effect.catchTag("SqlError", Effect.die)
        ))
      .handle("update", ({ path, payload }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          // The webhook first (its lookup is the key's 404/403): a refused URL changes nothing, not even the label.
          const generated = yield* webhook.configure(me.accountId, path.id, payload)
          const updated = yield* keys.rename(me.accountId, path.id, payload.label)
          return generated === null ? updated : { ...updated, webhook_secret: generated }
        }).pipe(
          Effect.catchTags({
            ...ownership,
            EndpointNotFound: ownership.KeyNotFound,
            EndpointNotYours: ownership.KeyNotYours,
            WebhookUrlRefused: (e) => Effect.fail(validationFailed(`webhook_url is refused: ${e.reason}`, "webhook_url"))
          }),
          Effect.catchTag("SqlError", Effect.die)
        ))
      .handle("revoke", ({ path }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          yield* keys.revoke(me.accountId, path.id, new Date(yield* Clock.currentTimeMillis))
          return { id: path.id, revoked: true as const }
        }).pipe(Effect.catchTags(ownership), Effect.catchTag("SqlError", Effect.die)))
  }))
