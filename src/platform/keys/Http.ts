import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { HeraldApi } from "../../http/api.ts"
import { conflict, forbidden, notFound, validationFailed } from "../../http/errors.ts"
import { generateWebhookSecret } from "../../webhooks/secret.ts"
import { WebhookSender } from "../../webhooks/WebhookSender.ts"
import { ApiKeys } from "./ApiKeys.ts"

/** The two ways a key id can be wrong, as the spec's statuses: unknown → 404, another's → 403. */
const ownership = {
  KeyNotFound: (e: { id: string }) => Effect.fail(notFound(`No key ${e.id}`)),
  KeyNotYours: (e: { id: string }) => Effect.fail(forbidden(`Key ${e.id} is not linked to this account`))
}

export const KeysHttpLive = HttpApiBuilder.group(HeraldApi, "keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const sender = yield* WebhookSender
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
          const current = yield* keys.get(me.accountId, path.id)
          if (payload.webhook_url !== undefined && payload.webhook_url !== null) {
            const checked = yield* sender.check(payload.webhook_url)
            if (!checked.ok) return yield* Effect.fail(validationFailed(`webhook_url is refused: ${checked.reason}`, "webhook_url"))
          }
          const updated = yield* keys.rename(me.accountId, path.id, payload.label)
          if (payload.webhook_url === undefined && payload.webhook_secret === undefined) return updated
          const url = payload.webhook_url === undefined ? current.webhook_url : payload.webhook_url
          const stored = yield* keys.webhookSecret(path.id)
          // A URL set with no secret (given or stored) gets a generated one, shown in this answer only.
          const generated = url !== null && payload.webhook_secret == null && stored === null ? generateWebhookSecret() : null
          const secret = url === null ? null : payload.webhook_secret ?? generated ?? stored
          yield* keys.setWebhook(path.id, url, secret)
          return generated === null ? updated : { ...updated, webhook_secret: generated }
        }).pipe(Effect.catchTags(ownership), Effect.catchTag("SqlError", Effect.die)))
      .handle("revoke", ({ path }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          yield* keys.revoke(me.accountId, path.id, new Date(yield* Clock.currentTimeMillis))
          return { id: path.id, revoked: true as const }
        }).pipe(Effect.catchTags(ownership), Effect.catchTag("SqlError", Effect.die)))
  }))
