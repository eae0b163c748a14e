/**
 * The failed-authentication table's own rules, on a real database: a window per client, counted
 * in PostgreSQL so that two tables (two processes) on one database count together; IPv6 by its
 * /64; a bounded mirror; a throttled client's lookups of unknown tokens, one per
 * THROTTLED_LOOKUP_INTERVAL_MS for all processes together.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { clientOf, makeAuthFailures, THROTTLED_LOOKUP_INTERVAL_MS, WINDOW_MS } from "../../src/http/auth-failures.ts"
import { countFailures } from "../../src/db/counter-windows.ts"
import { freshDatabase, query } from "../support/database.ts"

let databaseUrl: string
beforeAll(async () => {
  databaseUrl = await freshDatabase()
})

/** Runs `body` with two tables of failures (two processes' worth) on the file's database. */
const withTwo = <A>(limit: number, body: (a: ReturnType<typeof makeAuthFailures>, b: ReturnType<typeof makeAuthFailures>) => Effect.Effect<A, unknown, SqlClient.SqlClient>, maxAddresses?: number) =>
  Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* body(makeAuthFailures(sql, limit, maxAddresses), makeAuthFailures(sql, limit, maxAddresses))
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl) })))
  ))

describe("makeAuthFailures", () => {
  it("counts an address's failures in every process together, refusing it from the limit until its window ends", () =>
    withTwo(3, (a, b) =>
      Effect.gen(function*() {
        expect((yield* a.record("192.0.2.1", 1_000)).count).toBe(1)
        expect((yield* b.record("192.0.2.1", 1_001)).count).toBe(2)
        expect(a.refusedUntil("192.0.2.1", 1_010)).toBeUndefined()
        const third = yield* a.record("192.0.2.1", 1_020)
        expect(third).toMatchObject({ count: 3, end: 1_000 + WINDOW_MS })
        expect(a.refusedUntil("192.0.2.1", 1_030)).toBe(1_000 + WINDOW_MS)
        // b has not seen the third failure; asked about an unknown token it learns it (no lookup).
        expect(b.refusedUntil("192.0.2.1", 1_030)).toBeUndefined()
        expect(yield* b.mayLookUp("192.0.2.1", 1_030, false)).toBe(false)
        expect(b.refusedUntil("192.0.2.1", 1_030)).toBe(1_000 + WINDOW_MS)
        expect(a.refusedUntil("192.0.2.2", 1_030)).toBeUndefined()
        expect(a.refusedUntil("192.0.2.1", 1_000 + WINDOW_MS)).toBeUndefined()
        // A new window opens with the first failure after the last one ended.
        expect(yield* b.record("192.0.2.1", 1_000 + WINDOW_MS)).toMatchObject({ count: 1, end: 1_000 + 2 * WINDOW_MS })
      })))

  it("mirrors at most its number of addresses, and the database keeps counting the forgotten one", () =>
    withTwo(1, (a) =>
      Effect.gen(function*() {
        for (const [i, address] of ["192.0.3.1", "192.0.3.2", "192.0.3.3"].entries()) yield* a.record(address, i)
        expect(a.size()).toBe(2)
        expect(a.refusedUntil("192.0.3.1", 3)).toBeUndefined()
        expect(a.refusedUntil("192.0.3.3", 3)).toBe(2 + WINDOW_MS)
        expect(yield* a.mayLookUp("192.0.3.1", 3, false)).toBe(false)
        expect(a.refusedUntil("192.0.3.1", 3)).toBe(WINDOW_MS)
      }), 2))

  it("counts an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 one", async () => {
    expect(clientOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64")
    expect(clientOf("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64")
    expect(clientOf("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(clientOf("::1")).toBe("0:0:0:0::/64")
    expect(clientOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(clientOf("::ffff:127.0.0.2")).toBe("127.0.0.2")
    expect(clientOf("127.0.0.2")).toBe("127.0.0.2")
    await withTwo(2, (a, b) =>
      Effect.gen(function*() {
        yield* a.record("2001:db8:1:2::a", 0)
        yield* b.record("2001:db8:1:2::b", 0)
        expect(yield* a.mayLookUp("2001:db8:1:2::c", 1, false)).toBe(false)
        expect(a.refusedUntil("2001:db8:1:2::c", 1)).toBe(WINDOW_MS)
      }))
  })

  it("grants a throttled client one lookup per interval for all processes together, and any client under the limit all", () =>
    withTwo(2, (a, b) =>
      Effect.gen(function*() {
        const at = 5 * WINDOW_MS
        expect(yield* a.mayLookUp("192.0.2.9", at, true)).toBe(true)
        yield* a.record("192.0.2.9", at)
        yield* b.record("192.0.2.9", at + 10)
        expect(yield* a.mayLookUp("192.0.2.9", at + 20, true)).toBe(true)
        for (let i = 0; i < 20; i++) expect(yield* (i % 2 === 0 ? a : b).mayLookUp("192.0.2.9", at + 21 + i, true)).toBe(false)
        // SMTP has no allowance.
        expect(yield* b.mayLookUp("192.0.2.9", at + 20 + THROTTLED_LOOKUP_INTERVAL_MS, false)).toBe(false)
        expect(yield* b.mayLookUp("192.0.2.9", at + 20 + THROTTLED_LOOKUP_INTERVAL_MS, true)).toBe(true)
        expect(yield* a.mayLookUp("192.0.2.9", at + 21 + THROTTLED_LOOKUP_INTERVAL_MS, true)).toBe(false)
        // Another client is not throttled; and the window's end ends the throttle.
        expect(yield* a.mayLookUp("192.0.2.10", at + 30, true)).toBe(true)
        expect(yield* b.mayLookUp("192.0.2.9", at + WINDOW_MS, false)).toBe(true)
      })))

  it("deletes ended windows as it counts new failures, so the table stays about one window's size", async () => {
    await withTwo(1, () =>
      Effect.gen(function*() {
        const at = 10 * WINDOW_MS
        for (let i = 0; i < 50; i++) yield* countFailures([`test:old-${i}`], at, 1_000)
        for (let i = 0; i < 50; i++) yield* countFailures([`test:new-${i}`], at + 2_000, 1_000)
      }))
    const rows = await query<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM counter_windows WHERE holder LIKE 'test:old-%'")
    expect(rows[0]!.n).toBe(0)
  })
})
