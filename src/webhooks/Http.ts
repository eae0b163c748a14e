import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { WebhookTest } from "../events/schema.ts"
import { CurrentKey } from "../http/auth.ts"
import { groupApi } from "../http/group-api.ts"
import { WebhooksGroup } from "./Api.ts"
import { conflict, forbidden, notFound } from "../http/errors.ts"
import { QueueSignal } from "../db/QueueSignal.ts"
import { WebhookEndpoints } from "./WebhookEndpoints.ts"
import { WebhookSender } from "./WebhookSender.ts"
import { deliveryView, WebhookStore } from "./WebhookStore.ts"

/** Another account's endpoint answers 403: its id is a key id, and keys follow the spec's 403 rule. */
const ownership = {
  EndpointNotFound: (e: { id: string }) => Effect.fail(notFound(`No key ${e.id}`)),
  EndpointNotYours: (e: { id: string }) => Effect.fail(forbidden(`Key ${e.id} is not linked to this account`)),
  SqlError: Effect.die
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const WebhooksHttpLive = HttpApiBuilder.group(groupApi(WebhooksGroup), "webhooks", (handlers) =>
  Effect.gen(function*() {
    const endpoints = yield* WebhookEndpoints
    const store = yield* WebhookStore
    const sender = yield* WebhookSender
    const signal = yield* QueueSignal

    /** The caller's own key's endpoint (404 unknown, 403 another account's). */
    const ownKey = (id: string) => Effect.flatMap(CurrentKey, (me) => endpoints.find(me.accountId, id))
    const mine = <A, E, R>(f: (accountId: string) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentKey, (me) => f(me.accountId))

    const list = (id: string, params: { status?: "pending" | "delivered" | "failed" | undefined; limit: number; offset: number }) =>
      ownKey(id).pipe(Effect.zipRight(store.list(id, params)), Effect.catchTags(ownership))

    const detail = (id: string, dId: string) =>
      Effect.gen(function*() {
        yield* ownKey(id)
        const d = yield* store.find(id, dId)
        if (d === undefined) return yield* Effect.fail(notFound(`No webhook delivery ${dId}`))
        const attempts = yield* store.attempts(dId)
        return {
          ...deliveryView(d),
          payload: d.payload,
          response_body: d.response_body,
          attempt_history: attempts.map((a) => ({ ...a, attempted_at: a.attempted_at.toISOString() }))
        }
      }).pipe(Effect.catchTags(ownership))

    const retry = (id: string, dId: string) =>
      Effect.gen(function*() {
        const key = yield* ownKey(id)
        if ((yield* store.find(id, dId)) === undefined) return yield* Effect.fail(notFound(`No webhook delivery ${dId}`))
        if (key.webhook_url === null) return yield* Effect.fail(conflict(`Key ${id} has no webhook_url`))
        const fired = yield* sender.retryNow(id, dId)
        if (fired === undefined) return yield* Effect.fail(notFound(`No webhook delivery ${dId}`))
        if (fired === "busy") return yield* Effect.fail(conflict(`Webhook delivery ${dId} is being attempted right now; retry when it is done`))
        return fired
      }).pipe(Effect.catchTags(ownership))

    return handlers
      .handle("get", ({ path }) => mine((account) => endpoints.get(account, path.id)).pipe(Effect.catchTags(ownership)))
      .handle("remove", ({ path }) => mine((account) => endpoints.remove(account, path.id)).pipe(Effect.catchTags(ownership)))
      .handle("rotate", ({ path }) => mine((account) => endpoints.rotate(account, path.id)).pipe(Effect.catchTags(ownership)))
      .handle("test", ({ path }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          const key = yield* ownKey(path.id)
          if (key.webhook_url === null) return yield* Effect.fail(conflict(`Key ${path.id} has no webhook_url`))
          const queued = yield* store.enqueue(path.id, me.accountId, WebhookTest.make({ message: "Test event from Herald" }), yield* now)
          yield* signal.wake("herald_events")
          return { event_id: queued.eventId, delivery_id: queued.deliveryId, status: "pending" as const, webhook_url: key.webhook_url }
        }).pipe(Effect.catchTags(ownership)))
      .handle("keyList", ({ path, urlParams }) => list(path.id, urlParams))
      .handle("keyGet", ({ path }) => detail(path.id, path.dId))
      .handle("keyRetry", ({ path }) => retry(path.id, path.dId))
      .handle("endpointList", ({ path, urlParams }) => list(path.id, urlParams))
      .handle("endpointGet", ({ path }) => detail(path.id, path.dId))
      .handle("endpointRetry", ({ path }) => retry(path.id, path.dId))
  }))
