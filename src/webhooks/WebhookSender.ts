/**
 * Delivering one webhook: the key's current URL and secret, the SSRF check at delivery time
 * (connecting to the checked address), the signed POST, and what the ladder says next — a burst
 * retry in this fiber (1 s, 5 s, 25 s after the first failure), a queued retry in the database,
 * or the dead letter. Also the one inline attempt: a manual retry.
 */
import { Clock, Config, Duration, Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { Dns } from "../lib/dns.ts"
import { randomBase62 } from "../lib/ids.ts"
import { VERSION } from "../version.ts"
import { burstOffsetMs, nextStep } from "./ladder.ts"
import { type AttemptResult, startWebhook } from "./post.ts"
import { signPayload } from "./signature.ts"
import { checkWebhookUrl, type UrlPolicy } from "./ssrf.ts"
import { type DeliveryRow, type HeldDelivery, type Outcome, WebhookStore } from "./WebhookStore.ts"

/** How long past a burst retry's due time its lease lasts (a crashed replica's burst resumes then). */
const BURST_LEASE_MS = 60_000
/** The lease of a manual retry (its attempt lasts at most 10 s). */
const RETRY_LEASE_MS = 60_000

export const urlPolicy = Effect.gen(function*() {
  const config = yield* AppConfig
  const allowPrivate = yield* Config.boolean("HERALD_WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false))
  const policy: UrlPolicy = { production: config.env === "production", allowPrivate: allowPrivate && config.env !== "production" }
  return policy
})

/** How the dispatcher runs a delivery: as `owner`, each attempt inside one of its slots. */
export interface DeliverOptions {
  readonly owner: string
  readonly withSlot: <A, E, R>(attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Called when the delivery starts waiting for a burst retry (its slot is free). */
  readonly waiting: Effect.Effect<void>
  /** Hands a finished attempt (delivered, queued or failed) to the dispatcher's batched writer. */
  readonly recordDone: (outcome: Outcome) => Effect.Effect<void>
}

export class WebhookSender extends Effect.Service<WebhookSender>()("herald/WebhookSender", {
  effect: Effect.gen(function*() {
    const store = yield* WebhookStore
    const dns = yield* Dns
    const policy = yield* urlPolicy
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const lookup = (host: string) =>
      Effect.runPromise(
        Effect.all([dns.a(host).pipe(Effect.orElseSucceed(() => [])), dns.aaaa(host).pipe(Effect.orElseSucceed(() => []))])
          .pipe(Effect.map(([v4, v6]) => [...v4, ...v6]))
      )

    const check = (url: string) => Effect.promise(() => checkWebhookUrl(url, policy, lookup))

    /** One POST with the key's settings as held; never fails (a failure is a result). */
    const attemptOnce = (d: HeldDelivery) =>
      Effect.gen(function*() {
        const at = yield* now
        const refused = (error: string): AttemptResult => ({ ok: false, httpCode: null, error, durationMs: 0, responseBody: "" })
        if (d.webhook_url === null) return { at, result: refused("the key has no webhook URL") }
        const checked = yield* check(d.webhook_url)
        if (!checked.ok) return { at, result: refused(`webhook URL refused: ${checked.reason}`) }
        const body = JSON.stringify(d.payload)
        const timestamp = at.toISOString()
        const headers = {
          "content-type": "application/json",
          "user-agent": `Herald/${VERSION}`,
          "x-herald-signature": signPayload(d.webhook_secret ?? "", timestamp, body),
          "x-herald-timestamp": timestamp,
          "x-herald-event-id": d.event_id
        }
        // Interrupted (shutdown): the request is destroyed at once.
        const result = yield* Effect.async<AttemptResult>((resume) => {
          const abort = startWebhook({ url: checked.url, address: checked.address, body, headers }, (r) => resume(Effect.succeed(r)))
          return Effect.sync(abort)
        })
        return { at, result }
      })

    /**
     * What follows one ladder attempt: done (`due` null: delivered, queued in the database, or the
     * dead letter — handed to the batched writer) or a burst retry due at `due` (ms), recorded at
     * once with this replica keeping the lease. `firstFailure`: when the first attempt failed, if
     * this fiber saw it.
     */
    const settle = (d: DeliveryRow, options: DeliverOptions, at: Date, result: AttemptResult, firstFailure: number | null) =>
      Effect.gen(function*() {
        const end = yield* now
        const made = d.attempts + 1
        const done = (status: DeliveryRow["status"], nextAttemptAt: Date) =>
          options.recordDone({
            id: d.id, owner: options.owner, attempted_at: at.toISOString(), duration_ms: result.durationMs, http_code: result.httpCode,
            error: result.error, response_body: result.responseBody, status, next_attempt_at: nextAttemptAt.toISOString(), ladder: 1,
            updated_at: end.toISOString()
          }).pipe(Effect.as({ due: null, firstFailure }))
        if (result.ok) return yield* done("delivered", end)
        const step = nextStep(made)
        if (step._tag === "dead") return yield* done("failed", end)
        if (step._tag === "queued") return yield* done("pending", new Date(end.getTime() + step.delayMs))
        const first = made === 1 ? end.getTime() : firstFailure
        const offset = burstOffsetMs(made)
        const due = first !== null && offset !== null ? first + offset : end.getTime() + step.delayMs
        const next = { status: "pending" as const, nextAttemptAt: new Date(due + BURST_LEASE_MS), ladder: true, holdFor: options.owner }
        const row = yield* store.record(d.id, options.owner, at, result, next, end)
        return { due: row === undefined ? null : due, firstFailure: first }
      })

    /**
     * The dispatcher's path: attempt, then the in-process burst while it lasts (no slot held
     * while waiting). Answers whether the delivery ended delivered.
     */
    const deliver = (claimed: HeldDelivery, options: DeliverOptions) =>
      Effect.gen(function*() {
        let d = claimed
        let firstFailure: number | null = null
        for (;;) {
          let ok = false
          const next: { due: number | null; firstFailure: number | null } = yield* options.withSlot(
            Effect.flatMap(attemptOnce(d), ({ at, result }) => {
              ok = result.ok
              return settle(d, options, at, result, firstFailure)
            })
          )
          if (next.due === null) return ok
          firstFailure = next.firstFailure
          yield* options.waiting
          const wait = next.due - (yield* Clock.currentTimeMillis)
          if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
          const renewed = yield* store.renew(d.id, options.owner, new Date(Math.max(next.due, yield* Clock.currentTimeMillis) + BURST_LEASE_MS))
          if (renewed === undefined) return false // a manual retry or another replica took it over
          d = renewed
        }
      })

    /**
     * A manual retry: one attempt now with the key's current URL and secret, its result returned.
     * It is extra, not a step of the ladder: delivered on success; on failure the delivery keeps
     * its status and its next scheduled attempt (a pending one continues the ladder where it was).
     */
    const retryNow = (keyId: string, id: string) =>
      Effect.gen(function*() {
        const owner = `retry/${randomBase62(8)}`
        const at = yield* now
        const taken = yield* store.takeForRetry(keyId, id, owner, at, new Date(at.getTime() + RETRY_LEASE_MS))
        if (taken === undefined || taken === "busy") return taken
        const { row, previousDue } = taken
        const attempt = yield* attemptOnce(row)
        const end = yield* now
        const next = attempt.result.ok
          ? { status: "delivered" as const, nextAttemptAt: end, ladder: false, holdFor: null }
          : { status: row.status, nextAttemptAt: previousDue, ladder: false, holdFor: null }
        const recorded = yield* store.record(row.id, owner, attempt.at, attempt.result, next, end, true)
        return {
          delivery_id: row.id,
          status: recorded?.status ?? row.status,
          http_code: attempt.result.httpCode,
          error: attempt.result.error,
          duration_ms: attempt.result.durationMs
        }
      }).pipe(Effect.orDie)

    return { deliver, retryNow, check } as const
  })
}) {}
