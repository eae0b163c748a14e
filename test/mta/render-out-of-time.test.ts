/**
 * A bulk message whose render runs out of its time (the engine's 250 ms wall-clock limit) is
 * deferred, not failed: on a loaded machine a sound template can take that long, and the bench
 * saw a campaign delivery fail for good that way. Content that can never render (the memory
 * limit) still fails at once. The rows are written as the sequence scheduler writes them, with
 * content no API would accept, to reach the MTA's own handling.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newId } from "../../src/lib/ids.ts"
import type { StoredMessage } from "../../src/mta/queue/StoredMessage.ts"
import { writeQueue } from "../../src/transactional/queue-writer.ts"
import { servicesOn } from "../support/appliance.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"
import { waitForState } from "./outbound.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("steps.example")
})
afterAll(() => rig.stop())

/** Queues one sequence step to `to` whose html is `html`; answers its message id. */
const queueStep = async (to: string, html: string) => {
  const messageId = newId("msg")
  const stored: StoredMessage = {
    _tag: "sequence",
    origin: "sequence",
    sequence_id: "sq_render",
    step: 1,
    channel: "bulk",
    contact_id: "ct_render",
    to: { email: to },
    variables: { email: to },
    message: { from: { email: sender.from }, subject: "Step", content: [{ type: "text/html", value: html }] }
  }
  const context = { accountId: sender.accountId, keyId: sender.keyId, requestId: "req_render", fromEmail: sender.from, now: new Date() }
  const message = { messageId, personalizationIndex: 0, subject: "Step", stored, recipients: [{ email: to, kind: "to" as const }] }
  await Effect.runPromise(Effect.scoped(writeQueue(context, [message]).pipe(Effect.provide(servicesOn(rig.app.databaseUrl)))))
  return messageId
}

describe("a render out of time", () => {
  it("defers the delivery (4.3.0, retried later); content over the memory limit fails it", async () => {
    const slow = await queueStep("slow@steps.example", "{% for i in (1..3000000) %}{% endfor %}")
    const huge = await queueStep("huge@steps.example", "{% for i in (1..100000000) %}{% endfor %}")
    await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: { from: { email: sender.from }, subject: "wake", content: [{ type: "text/plain", value: "x" }], personalizations: [{ to: [{ email: "wake@steps.example" }] }] } })

    const deferred = await waitForState(rig.app, slow, "slow@steps.example", ["deferred", "failed"])
    expect(deferred.state).toBe("deferred")
    expect(deferred.last_status).toBe("4.3.0")
    expect(deferred.last_reply).toMatch(/render limit exceeded/)
    const failed = await waitForState(rig.app, huge, "huge@steps.example", ["deferred", "failed"])
    expect(failed.state).toBe("failed")
    expect(failed.last_status).toBe("5.6.0")
    expect(rig.sink.received.some((m) => m.rcptTo.includes("slow@steps.example"))).toBe(false)
  }, 60_000)
})
