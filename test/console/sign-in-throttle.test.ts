/**
 * The console sign-in's failure counters (src/api/console/sign-in-throttle.ts) on a real database:
 * fixed windows per client (an IPv6 /64 as one) and per email (any case), counted in PostgreSQL so
 * that two throttles (two processes) on one database count together.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { ACCOUNT_FAILURES_PER_WINDOW, makeSignInThrottle, WINDOW_MS } from "../../src/api/console/sign-in-throttle.ts"
import { freshDatabase } from "../support/database.ts"

let databaseUrl: string
beforeAll(async () => {
  databaseUrl = await freshDatabase()
})

const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(effect.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl) })))))

describe("the sign-in throttle", () => {
  it("counts an email in any case over every process, and forgets it at a right password", () =>
    run(Effect.gen(function*() {
      const [a, b] = [makeSignInThrottle(1_000), makeSignInThrottle(1_000)]
      for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW; i++) {
        yield* (i % 2 === 0 ? a : b).failed(`2001:db8::${i + 1}`, i % 2 === 0 ? "Ops@Acme.example" : "ops@acme.example ", 0)
        if (i < ACCOUNT_FAILURES_PER_WINDOW - 1) expect(yield* a.refusedUntil("198.51.100.7", "ops@acme.example", 1)).toBeUndefined()
      }
      expect(yield* a.refusedUntil("198.51.100.7", "OPS@acme.example", 1)).toBe(WINDOW_MS)
      expect(yield* b.refusedUntil("198.51.100.7", "OPS@acme.example", 1)).toBe(WINDOW_MS)
      expect(yield* b.refusedUntil("198.51.100.7", "ops@acme.example", WINDOW_MS)).toBeUndefined()
      yield* b.succeeded("ops@acme.example")
      expect(yield* a.refusedUntil("198.51.100.7", "ops@acme.example", 1)).toBeUndefined()
    })))

  it("counts an IPv6 client by its /64, the later window deciding when both refuse", () =>
    run(Effect.gen(function*() {
      const [a, b] = [makeSignInThrottle(2), makeSignInThrottle(2)]
      yield* a.failed("2001:db8:1:2::a", "x@example.com", 0)
      yield* b.failed("2001:db8:1:2::b", "y@example.com", 0)
      expect(yield* a.refusedUntil("2001:db8:1:2::c", "z@example.com", 1)).toBe(WINDOW_MS)
      expect(yield* a.refusedUntil("2001:db8:1:3::c", "z@example.com", 1)).toBeUndefined()
      for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW; i++) yield* b.failed(`192.0.2.${i}`, "late@example.com", 5)
      expect(yield* a.refusedUntil("2001:db8:1:2::c", "late@example.com", 6)).toBe(5 + WINDOW_MS)
    })))
})
