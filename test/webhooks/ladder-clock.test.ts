/**
 * The whole retry ladder as the appliance runs it: the dispatcher layer on a fresh database,
 * driven by TestClock (no real waits), against a real receiver that always answers 500. The
 * burst comes 1 s, 5 s and 25 s after the first failure; the queued retries 5 min, 30 min, 2 h,
 * 6 h and 24 h three times apart, across a restart of the layer; then `failed`, and no more.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { emitEvent } from "../../src/events/outbox.ts"
import { EmailSent } from "../../src/events/schema.ts"
import { Accounts } from "../../src/platform/accounts/Accounts.ts"
import { ApiKeys } from "../../src/platform/keys/ApiKeys.ts"
import { WebhookEndpoints } from "../../src/webhooks/WebhookEndpoints.ts"
import { DispatcherLive } from "../../src/webhooks/Dispatcher.ts"
import { verifySignature } from "../../src/webhooks/signature.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { sleep } from "../support/net.ts"
import { startReceiver } from "./receiver.ts"

const START = Date.parse("2026-03-02T08:00:00.000Z")
const SECOND = 1_000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
/**
 * How late an attempt may be recorded: while nothing happens the clock is nudged in 100 ms steps
 * (the dispatcher's poll is 250 ms; a slow machine may need a few). Burst retries sleep to their
 * due time exactly; queued ones wait for the dispatcher's next poll.
 */
const SLACK = 1_500
const QUEUED_SLACK = 5_000

const realPause = (ms: number) => Effect.promise(() => sleep(ms))


interface AttemptRow extends Record<string, unknown> {
  readonly attempted_at: Date
  readonly http_code: number | null
}
interface DeliveryState extends Record<string, unknown> {
  readonly status: string
  readonly attempts: number
  readonly next_attempt_at: Date
}

describe("the webhook dispatcher on TestClock", () => {
  it.effect("runs the burst and the queued ladder to failed, across a restart", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const services = servicesOn(databaseUrl, { HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
      const receiver = yield* Effect.promise(() => startReceiver(500))
      yield* Effect.addFinalizer(() => Effect.promise(() => receiver.close()))
      const secret = "whsec_clock_test_secret_0123456789"

      // An account whose key has a webhook, and one email.sent event in the outbox.
      yield* TestClock.setTime(START)
      yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Ladder", email: "ladder@example.org", password: "long enough pw" })
        const keys = yield* ApiKeys
        const key = yield* keys.create(account.id, "hooks")
        yield* (yield* WebhookEndpoints).configure(account.id, key.id, { webhook_url: receiver.url(), webhook_secret: secret })
        yield* emitEvent({
          accountId: account.id, keyId: key.id, at: new Date(START),
          event: EmailSent.make({ request_id: "req_ladder", to: ["someone@example.org"], subject: "Hi", message_id: "msg_ladder" })
        })
      }).pipe(Effect.provide(services), Effect.scoped)

      const attempts = Effect.promise(() =>
        query<AttemptRow>(databaseUrl, "SELECT attempted_at, http_code FROM webhook_attempts ORDER BY attempted_at, id"))
      const delivery = Effect.promise(() =>
        query<DeliveryState>(databaseUrl, "SELECT status, attempts, next_attempt_at FROM webhook_deliveries")).pipe(Effect.map((r) => r[0]!))

      /**
       * Sets the clock to `at` and waits (real time, with a deadline) until attempt number `n` is
       * on record. Past a short wait the clock is nudged 100 ms: an iteration busy when the
       * clock moved only starts its sleep afterwards.
       */
      const attemptAt = (at: number, n: number) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(at)
          const deadline = Date.now() + 30_000
          let idle = 0
          for (;;) {
            const rows = yield* attempts
            if (rows.length >= n) return rows
            if (Date.now() > deadline) return yield* Effect.die(new Error(`attempt ${n} not made by ${new Date(at).toISOString()}`))
            yield* realPause(50)
            if (++idle % 4 === 0) yield* TestClock.adjust(Duration.millis(100))
          }
        })

      const dispatcher = DispatcherLive.pipe(Layer.provideMerge(services))

      // First run: the first attempt, the burst, and two queued retries.
      yield* Effect.gen(function*() {
        const first = (yield* attemptAt(START, 1))[0]!.attempted_at.getTime()
        expect(first - START).toBeLessThan(SLACK)
        for (const [i, offset] of [1 * SECOND, 5 * SECOND, 25 * SECOND].entries()) {
          const rows = yield* attemptAt(first + offset, i + 2)
          const late = rows[i + 1]!.attempted_at.getTime() - (first + offset)
          expect(late, `burst retry ${i + 1}`).toBeGreaterThanOrEqual(0)
          expect(late, `burst retry ${i + 1}`).toBeLessThan(SLACK)
        }
        for (const n of [5, 6]) yield* attemptAt((yield* delivery).next_attempt_at.getTime(), n)
      }).pipe(Effect.provide(dispatcher), Effect.scoped)

      // Restart: nothing waits in memory; the next run takes the ladder up where the database has it.
      const between = yield* delivery
      expect(between).toMatchObject({ status: "pending", attempts: 6 })
      yield* Effect.gen(function*() {
        for (const n of [7, 8, 9, 10, 11]) yield* attemptAt((yield* delivery).next_attempt_at.getTime(), n)
        expect((yield* delivery).status).toBe("failed")
        // Dead letter: two more days bring nothing.
        yield* TestClock.adjust(Duration.hours(48))
        yield* realPause(1_000)
      }).pipe(Effect.provide(dispatcher), Effect.scoped)

      const rows = yield* attempts
      expect(rows).toHaveLength(11)
      expect(rows.every((r) => r.http_code === 500)).toBe(true)
      const gaps = rows.slice(1).map((r, i) => r.attempted_at.getTime() - rows[i]!.attempted_at.getTime())
      const expected = [1 * SECOND, 4 * SECOND, 20 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR, 24 * HOUR, 24 * HOUR]
      gaps.forEach((gap, i) => {
        // A queued retry is due its delay after the previous attempt ended: never early.
        expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual(expected[i]! - (i < 3 ? SLACK : 0))
        expect(gap, `gap ${i + 1}`).toBeLessThan(expected[i]! + (i < 3 ? SLACK : QUEUED_SLACK))
      })
      expect(yield* delivery).toMatchObject({ status: "failed", attempts: 11 })
      // Every attempt reached the receiver, signed with the key's secret at the attempt's time.
      expect(receiver.hits).toHaveLength(11)
      for (const hit of receiver.hits) {
        const ts = String(hit.headers["x-herald-timestamp"])
        expect(verifySignature(secret, ts, hit.body, String(hit.headers["x-herald-signature"]), new Date(ts))).toBe(true)
      }
      expect(receiver.hits.map((h) => h.headers["x-herald-timestamp"])).toEqual(rows.map((r) => r.attempted_at.toISOString()))
    }).pipe(Effect.scoped), 120_000)
})
