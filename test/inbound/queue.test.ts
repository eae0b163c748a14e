/**
 * The inbound queue's batch statements (src/inbound/processor/InboundQueue.ts): a claim takes due
 * messages up to a byte budget (always at least one, however large), so that a batch of large
 * messages cannot exhaust memory; a group completion marks, in one statement, only the messages
 * whose lease this replica still holds, and runs effects for those alone.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InboundQueue } from "../../src/inbound/processor/InboundQueue.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { sendRaw } from "../support/smtp-client.ts"

const TO = "postmaster@bounces.herald.test"
let app: Appliance

beforeAll(async () => {
  app = await startAppliance({ env: { HERALD_INBOUND_ENABLED: "false" } })
})
afterAll(async () => {
  await app.stop()
})

/** Stores a message of about `kb` KB through the listener; returns its id. */
const store = async (kb: number) => {
  const reply = await sendRaw(app.smtpPort, { from: "", to: [TO] }, `Subject: ${kb} KB\r\n\r\n${"x".repeat(76).concat("\r\n").repeat(kb * 13)}`)
  expect(reply.code).toBe(250)
  return /queued as (\S+)/.exec(reply.text)![1]!
}

const useQueue = <A, E>(f: (queue: InboundQueue) => Effect.Effect<A, E>) =>
  withServices(app, Effect.flatMap(InboundQueue, f).pipe(Effect.provide(InboundQueue.Default)))

describe("the inbound queue", () => {
  it("claims due messages up to a byte budget, and always at least one", async () => {
    const ids = [await store(10), await store(10), await store(10)]
    const sizes = await query<{ size: number }>(app.databaseUrl, "SELECT size FROM inbound_messages WHERE id = ANY($1) ORDER BY received_at", [ids])
    const now = new Date(Date.now() + 60_000)
    const lease = new Date(now.getTime() + 3_600_000) // past the second test's claims
    // The budget is reached inside the second message: the first two are claimed, the third is not.
    const budget = sizes[0]!.size + 1
    const claimed = await useQueue((q) => q.claim("owner-a", now, lease, 10, budget))
    expect(claimed.map((m) => m.id)).toEqual(ids.slice(0, 2))
    // A budget smaller than any message still claims one.
    const one = await useQueue((q) => q.claim("owner-b", now, lease, 10, 1))
    expect(one.map((m) => m.id)).toEqual([ids[2]])
    expect(await useQueue((q) => q.claim("owner-c", now, lease, 10, 1))).toEqual([])
  })

  it("completes a group only where this replica still holds the lease, and runs effects for those alone", async () => {
    const [mine, lost] = [await store(1), await store(1)]
    const now = new Date(Date.now() + 120_000)
    const claimed = await useQueue((q) => q.claim("replica-a", now, new Date(now.getTime() + 60_000), 10))
    expect(claimed.map((m) => m.id)).toEqual([mine, lost])
    // Another replica took the second one over after the lease ran out.
    await query(app.databaseUrl, "UPDATE inbound_messages SET lease_owner = 'replica-b' WHERE id = $1", [lost])
    const ran: Array<string> = []
    const outcomes = await useQueue((q) =>
      q.completeGroup("replica-a", [mine!, lost!].map((id) => ({
        id,
        kind: "other",
        result: { kind: "other" },
        error: null,
        processedAt: now,
        effects: Effect.sync(() => ran.push(id)).pipe(Effect.as(id))
      })))
    )
    expect(outcomes).toEqual([mine, undefined])
    expect(ran).toEqual([mine])
    const rows = await query<{ id: string; state: string; lease_owner: string | null; attempts: number }>(
      app.databaseUrl, "SELECT id, state, lease_owner, attempts FROM inbound_messages WHERE id = ANY($1) ORDER BY received_at", [[mine, lost]])
    expect(rows).toEqual([
      { id: mine, state: "processed", lease_owner: null, attempts: 1 },
      { id: lost, state: "received", lease_owner: "replica-b", attempts: 0 }
    ])
  })
})
