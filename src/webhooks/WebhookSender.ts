/**
 * Delivering one webhook: the key's current URL and secret, the SSRF check at delivery time
 * (connecting to the checked address), the signed POST, and what the ladder says next — a burst
 * retry in this fiber (1 s, 5 s, 25 s), a queued retry in the database, or the dead letter.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Config, Duration, Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { Dns } from "../lib/dns.ts"
import { VERSION } from "../version.ts"
import { MAX_ATTEMPTS, nextStep } from "./ladder.ts"
import { type AttemptResult, postWebhook } from "./post.ts"
import { signPayload } from "./signature.ts"
import { checkWebhookUrl, type UrlPolicy } from "./ssrf.ts"
import { type DeliveryRow, WebhookStore } from "./WebhookStore.ts"

export const urlPolicy = Effect.gen(function*() {
  const config = yield* AppConfig
  const allowPrivate = yield* Config.boolean("HERALD_WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false))
  const policy: UrlPolicy = { production: config.env === "production", allowPrivate: allowPrivate && config.env !== "production" }
  return policy
})

export class WebhookSender extends Effect.Service<WebhookSender>()("herald/WebhookSender", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
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

    /** One POST with the key's current URL and secret; never fails (a failure is a result). */
    const attemptOnce = (d: DeliveryRow) =>
      Effect.gen(function*() {
        const [key] = yield* sql<{ webhook_url: string | null; webhook_secret: string | null }>`
          SELECT webhook_url, webhook_secret FROM api_keys WHERE id = ${d.key_id}`
        const refused = (error: string): AttemptResult => ({ ok: false, httpCode: null, error, durationMs: 0, responseBody: "" })
        if (key?.webhook_url == null) return refused("the key has no webhook URL")
        const checked = yield* check(key.webhook_url)
        if (!checked.ok) return refused(`webhook URL refused: ${checked.reason}`)
        const body = JSON.stringify(d.payload)
        const timestamp = (yield* now).toISOString()
        return yield* Effect.promise(() =>
          postWebhook({
            url: checked.url,
            address: checked.address,
            body,
            headers: {
              "content-type": "application/json",
              "user-agent": `Herald/${VERSION}`,
              "x-herald-signature": signPayload(key.webhook_secret ?? "", timestamp, body),
              "x-herald-timestamp": timestamp,
              "x-herald-event-id": d.event_id
            }
          })
        )
      }).pipe(Effect.orDie)

    /** Records one attempt; the next state follows the ladder (`burst` kept pending for this fiber). */
    const settle = (d: DeliveryRow, result: AttemptResult, attemptsMade: number) =>
      Effect.gen(function*() {
        const at = yield* now
        if (result.ok) return { row: yield* store.record(d.id, result, { status: "delivered", nextAttemptAt: at }, at), burst: null }
        const step = nextStep(attemptsMade)
        if (step._tag === "dead" || attemptsMade >= MAX_ATTEMPTS) {
          return { row: yield* store.record(d.id, result, { status: "failed", nextAttemptAt: at }, at), burst: null }
        }
        const nextAttemptAt = new Date(at.getTime() + step.delayMs + (step._tag === "burst" ? 60_000 : 0))
        const row = yield* store.record(d.id, result, { status: "pending", nextAttemptAt }, at)
        return { row, burst: step._tag === "burst" ? step.delayMs : null }
      }).pipe(Effect.orDie)

    /** The dispatcher's path: attempt, then the in-process burst while it lasts. */
    const deliver = (claimed: DeliveryRow) =>
      Effect.gen(function*() {
        let d = claimed
        for (;;) {
          const result = yield* attemptOnce(d)
          const { burst, row } = yield* settle(d, result, d.attempts + 1)
          if (burst === null) return row
          yield* Effect.sleep(Duration.millis(burst))
          d = row
        }
      })

    /** Inline (test and manual retry): one attempt, its result returned to the caller. */
    const fireNow = (d: DeliveryRow) =>
      Effect.gen(function*() {
        const result = yield* attemptOnce(d)
        const { row } = yield* settle(d, result, Math.max(d.attempts + 1, MAX_ATTEMPTS - 1))
        return { delivery_id: d.id, status: row.status, http_code: result.httpCode, error: result.error, duration_ms: result.durationMs }
      })

    return { deliver, fireNow, check } as const
  })
}) {}
