/**
 * Adaptive back-off, as a sender sees it: when a destination answers 421 (slow down), the delivery
 * is deferred and the whole domain is paused — no attempt for it reaches the MX during the pause
 * (a minute by default; here the shaping file's `backoff_seconds`, so the test waits 10 s rather
 * than 60), even for new mail and for rows that fall due, while other MX sites flow on;
 * after the pause its mail goes out. Asserted on the sink's record of RCPT commands, so it holds
 * whether the pause is kept in memory or in PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeShapingFile } from "../support/shaping.ts"
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"
import { deliveryOf, makeDue, type OutboundRig, startOutbound, waitForState } from "./outbound.ts"
import { sleep } from "../support/net.ts"

let sink: SmtpSink
let rig: OutboundRig
/** The checks inside the pause end about 3.7 s after the 421 here (3 s of it a fixed wait): 10 s leaves them 5 s. */
const PAUSE_MS = 10_000

beforeAll(async () => {
  sink = await startSmtpSink()
  // Two MX names (both the sink): a pause covers the MX set that asked for it, not other sites.
  rig = await startOutbound(sink.port, {
    "mx-slow.sink.test": { A: ["127.0.0.1"] },
    "mx-open.sink.test": { A: ["127.0.0.1"] },
    "slow.example": { MX: [{ preference: 10, exchange: "mx-slow.sink.test" }] },
    "open.example": { MX: [{ preference: 10, exchange: "mx-open.sink.test" }] }
  }, {
    HERALD_SHAPING_FILE: writeShapingFile({
      max_connections: 10,
      messages_per_connection: 100,
      max_messages_per_minute: null,
      backoff_seconds: PAUSE_MS / 1_000
    })
  })
})
afterAll(async () => {
  await rig.stop()
  await sink.close()
})

const rcptsFor = (domain: string) => sink.rcpts.filter((r) => r.address.endsWith(`@${domain}`))

describe("adaptive back-off", () => {
  it("pauses a domain that answers 421: no attempt reaches it during the pause, other MX sites flow, then it resumes", {
    timeout: 150_000
  }, async () => {
    sink.replies.set("first@slow.example", "421 4.7.0 Too many messages, slow down")
    const first = await rig.send("first@slow.example")
    const deferred = await waitForState(rig.app, first.messageId, "first@slow.example", ["deferred", "bounced", "failed", "sent"])
    expect(deferred).toMatchObject({ state: "deferred", attempts: 1, last_code: 421 })
    const refusedAt = rcptsFor("slow.example")[0]!.at

    // During the pause: the deferred row made due again, and new mail for the domain, are left
    // out of claims; a message to another domain, queued after them, is delivered meanwhile.
    await makeDue(rig.app, deferred.id)
    const second = await rig.send("second@slow.example")
    const other = await rig.send("other@open.example")
    await waitForState(rig.app, other.messageId, "other@open.example", ["sent"])
    await sleep(3_000) // three of the MTA's one-second polls, with the rows due all along
    expect(Date.now() - refusedAt).toBeLessThan(PAUSE_MS - 1_000) // still inside the pause, or the check says nothing
    expect(rcptsFor("slow.example")).toHaveLength(1)
    expect(await deliveryOf(rig.app, second.messageId, "second@slow.example")).toMatchObject({ state: "queued", attempts: 0 })
    expect(await deliveryOf(rig.app, first.messageId, "first@slow.example")).toMatchObject({ state: "deferred", attempts: 1 })

    // After the pause both go out, and not one RCPT for the domain came before it ended.
    sink.replies.delete("first@slow.example")
    // Both are waited for side by side: after the pause they go out in whichever order the claims
    // take them (the deferred row and the new one are both due), which is not what this checks.
    await Promise.all([
      waitForState(rig.app, second.messageId, "second@slow.example", ["sent"], { timeoutMs: 90_000 }),
      waitForState(rig.app, first.messageId, "first@slow.example", ["sent"], { timeoutMs: 90_000 })
    ])
    const later = rcptsFor("slow.example").slice(1)
    expect(later.map((r) => r.address).sort()).toEqual(["first@slow.example", "second@slow.example"])
    // The sink's clock and the pause's (the database's) are one machine's; a second of slack.
    for (const r of later) expect(r.at - refusedAt).toBeGreaterThanOrEqual(PAUSE_MS - 1_000)
  })
})
