/**
 * The webhook dispatcher actor: turns outbox events into deliveries for each key's endpoint and
 * delivers due ones (leased claims, so replicas never run the same attempt at once). Queued
 * retries wait in the database, not in memory: a receiver down for hours costs rows, not RAM.
 */
import { Clock, Duration, Effect, Queue } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { actorLayer } from "../lib/actor.ts"
import { randomBase62 } from "../lib/ids.ts"
import { QueueSignal } from "../mta/queue/QueueSignal.ts"
import { WebhookSender } from "./WebhookSender.ts"
import { WebhookStore } from "./WebhookStore.ts"

const CONCURRENCY = 32
const LEASE_MS = 90_000
const POLL = Duration.millis(250)

export const DispatcherLive = actorLayer("webhooks", Effect.gen(function*() {
  const config = yield* AppConfig
  const store = yield* WebhookStore
  const sender = yield* WebhookSender
  const signal = yield* QueueSignal
  const wakeups = yield* signal.subscribe
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
  let inFlight = 0

  const step = Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    yield* store.fanOut(now)
    const free = CONCURRENCY - inFlight
    if (free <= 0) return
    const due = yield* store.claim(owner, now, new Date(now.getTime() + LEASE_MS), free)
    for (const d of due) {
      inFlight += 1
      yield* Effect.forkScoped(sender.deliver(d).pipe(
        Effect.catchAllCause((cause) => Effect.logError("webhook delivery failed; its lease hands it out again", cause)),
        Effect.ensuring(Effect.sync(() => (inFlight -= 1))),
        Effect.annotateLogs({ webhook_delivery_id: d.id })
      ))
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("webhook dispatch failed; retrying", cause)))

  yield* Effect.forever(step.pipe(Effect.zipRight(Queue.take(wakeups).pipe(Effect.timeout(POLL), Effect.ignore))))
}))
