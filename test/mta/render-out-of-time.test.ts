/**
 * A bulk message whose render is stopped at its deadline (here HERALD_RENDER_TIMEOUT_MS=1000: the
 * render worker is terminated) is deferred, not failed: on a loaded machine a sound template can
 * take that long. But not for ever: the third stop of one step's content makes its deliveries
 * wait (render_failed, 10 minutes) without rendering, instead of each recipient paying the
 * deadline again at every retry for 120 h. Content that can never render (the memory limit)
 * still fails at once. The rows are written as the sequence scheduler writes them, with content no
 * API would accept, to reach the MTA's own handling. (A campaign pausing after three stops:
 * test/bulk/render-isolation.test.ts.)
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newId } from "../../src/lib/ids.ts"
import type { StoredMessage } from "../../src/mta/queue/StoredMessage.ts"
import { writeQueue } from "../../src/mta/queue/enqueue.ts"
import { servicesOn } from "../support/appliance.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"
import { waitForState } from "./outbound.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_RENDER_TIMEOUT_MS: "1000", HERALD_RENDER_WORKERS: "2" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("steps.example")
})
afterAll(() => rig.stop())

/** Queues one sequence step to `to` whose html is `html`; answers its message id. */
const queueStep = async (to: string, html: string, step = 1) => {
  const messageId = newId("msg")
  const stored: StoredMessage = {
    _tag: "sequence",
    origin: "sequence",
    sequence_id: "sq_render",
    step,
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
  it("defers the delivery (4.3.0); the third stop of one step makes its deliveries wait; content over the memory limit fails", async () => {
    const slow = "{% for i in (1..5000) %}{% for j in (1..5000) %}{% endfor %}{% endfor %}"
    const recipients = ["slow1@steps.example", "slow2@steps.example", "slow3@steps.example"]
    const slowIds = await Promise.all(recipients.map((to) => queueStep(to, slow)))
    const huge = await queueStep("huge@steps.example", "{% for i in (1..100000000) %}{% endfor %}", 2)
    await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: { from: { email: sender.from }, subject: "wake", content: [{ type: "text/plain", value: "x" }], personalizations: [{ to: [{ email: "wake@steps.example" }] }] } })

    const deferred = await Promise.all(recipients.map((to, i) => waitForState(rig.app, slowIds[i]!, to, ["deferred", "failed"], { timeoutMs: 120_000 })))
    for (const row of deferred) {
      expect(row.state).toBe("deferred")
      expect(row.last_status).toBe("4.3.0")
      expect(row.last_reply).toMatch(/render_failed: .*(longer than 1000 ms|render limit exceeded)/)
    }
    // The third stop: that delivery waits the hold's 10 minutes, and the step's next ones wait without rendering.
    const third = deferred.filter((row) => /\(stopped 3 times\); the step waits/.test(String(row.last_reply)))
    expect(third).toHaveLength(1)
    expect(new Date(third[0]!.next_attempt_at!).getTime() - Date.now()).toBeGreaterThan(9 * 60_000)
    const failed = await waitForState(rig.app, huge, "huge@steps.example", ["deferred", "failed"])
    expect(failed.state).toBe("failed")
    expect(failed.last_status).toBe("5.6.0")
    expect(failed.last_reply).toMatch(/render_failed: .*memory alloc limit exceeded/)
    expect(rig.sink.received.some((m) => m.rcptTo.some((r) => r.startsWith("slow")))).toBe(false)
  }, 180_000)
})
