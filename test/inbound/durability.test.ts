/**
 * Nothing the MX listener answered 250 for is ever lost: the appliance SIGKILLed right after the
 * 250 still has the message, and understands it after the restart; a message that keeps failing
 * is parked with its error and its bytes; the retention prune drops only handled messages' bytes.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { InboundQueue, MAX_ATTEMPTS } from "../../src/inbound/processor/InboundQueue.ts"
import { spawnAppliance, startAppliance, withServices } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { dmarcMail, dmarcXml } from "../support/reports.ts"
import { eventually } from "../support/eventually.ts"
import { sendRaw } from "../support/smtp-client.ts"

const TO = "dmarc@bounces.herald.test"
const report = (id: string) =>
  dmarcMail(TO, id, dmarcXml("nobody.example", id, 1_700_000_000, 1_700_086_399, [{ ip: "192.0.2.1", count: 3, dkim: "pass", spf: "fail" }]))

describe("durability of inbound mail", () => {
  it("keeps a message answered 250 when the appliance is SIGKILLed at once, and understands it after restart", async () => {
    const databaseUrl = await freshDatabase()
    const first = await spawnAppliance({ databaseUrl, env: { HERALD_INBOUND_ENABLED: "false" } })
    const raw = report("killed-after-250")
    const reply = await sendRaw(first.smtpPort, { from: "noreply@receiver.test", to: [TO] }, raw)
    first.child.kill("SIGKILL")
    await first.exited
    expect(reply.code).toBe(250)
    const id = /queued as (\S+)/.exec(reply.text)![1]
    const [stored] = await query<{ raw: Buffer; state: string }>(databaseUrl, "SELECT raw, state FROM inbound_messages WHERE id = $1", [id])
    expect(stored!.raw.toString()).toBe(raw)
    expect(stored!.state).toBe("received")

    const second = await spawnAppliance({ databaseUrl })
    try {
      const done = await eventually(async () => {
        const [row] = await query<{ state: string; kind: string; result: { dmarc: Array<{ report_id: string }> } }>(
          databaseUrl, "SELECT state, kind, result FROM inbound_messages WHERE id = $1", [id])
        return row?.state === "processed" ? row : undefined
      }, "the stored message to be processed", 30_000)
      expect(done.kind).toBe("dmarc")
      expect(done.result.dmarc[0]!.report_id).toBe("killed-after-250")
    } finally {
      await second.stop()
    }
  }, 120_000)

  it("parks a message that keeps failing as failed with its error, bytes kept; the prune then drops only handled bytes", async () => {
    const app = await startAppliance({ env: { HERALD_INBOUND_ENABLED: "false" } })
    try {
      const failing = await sendRaw(app.smtpPort, { from: "a@receiver.test", to: [TO] }, report("will-fail"))
      const failingId = /queued as (\S+)/.exec(failing.text)![1]!

      let now = Date.now()
      await withServices(app, Effect.gen(function*() {
        const queue = yield* InboundQueue
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          now += 3_600_000
          const [mine] = yield* queue.claim("test-owner", new Date(now), new Date(now + 60_000), 10)
          expect(mine?.id).toBe(failingId)
          yield* queue.fail("test-owner", failingId, mine!.attempts, `parse exploded (attempt ${attempt + 1})`, new Date(now))
        }
      }).pipe(Effect.provide(InboundQueue.Default)))

      const [parked] = await query<{ state: string; error: string; attempts: number; raw: Buffer | null }>(
        app.databaseUrl, "SELECT state, error, attempts, raw FROM inbound_messages WHERE id = $1", [failingId])
      expect(parked).toMatchObject({ state: "failed", error: `parse exploded (attempt ${MAX_ATTEMPTS})`, attempts: MAX_ATTEMPTS })
      expect(parked!.raw).not.toBeNull()

      // A message still waiting to be understood keeps its bytes whatever its age.
      const waiting = await sendRaw(app.smtpPort, { from: "b@receiver.test", to: [TO] }, report("still-waiting"))
      const waitingId = /queued as (\S+)/.exec(waiting.text)![1]!

      const pruned = await withServices(app, Effect.flatMap(InboundQueue, (q) => q.prune(new Date(now + 86_400_000))).pipe(
        Effect.provide(InboundQueue.Default)))
      expect(pruned).toBe(1)
      const rows = await query<{ id: string; raw: Buffer | null }>(app.databaseUrl, "SELECT id, raw FROM inbound_messages ORDER BY id")
      expect(rows.find((r) => r.id === failingId)!.raw).toBeNull()
      expect(rows.find((r) => r.id === waitingId)!.raw).not.toBeNull()
    } finally {
      await app.stop()
    }
  }, 120_000)
})
