/**
 * The envelope sender follows the customer's return-path MX, end to end (delivery rig: a DNS
 * server on loopback and an SMTP sink): once `herald-bounces.<domain>` has an MX pointing at the
 * appliance (HERALD_HOSTNAME) and is verified, VERP addresses live on that subdomain; when the
 * record is removed, the periodic re-check notices and mail goes back to HERALD_BOUNCE_DOMAIN.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Domains } from "../../src/platform/domains/Domains.ts"
import { withServices } from "../support/appliance.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import type { Received } from "../support/smtp-sink.ts"

const HOSTNAME = "mta.herald.test"
const BOUNCE_DOMAIN = `bounces.${HOSTNAME}`

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_HOSTNAME: HOSTNAME })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("rcpt.example")
})
afterAll(() => rig.stop())

const returnPathName = () => `herald-bounces.${sender.domain}`

/** Sends one message to `recipient` and returns what the sink received for it (deadline, not a sleep). */
const deliver = async (recipient: string, timeoutMs = 30_000): Promise<Received> => {
  const res = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, recipient) })
  expect(res.status).toBe(202)
  const end = Date.now() + timeoutMs
  for (;;) {
    const found = rig.sink.received.find((m) => m.rcptTo.includes(recipient))
    if (found !== undefined) return found
    if (Date.now() > end) throw new Error(`nothing for ${recipient} reached the sink within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const returnPathVerified = async () =>
  (await rig.app.request("GET", `/v1/client/domains/${sender.domain}`, { token: sender.token })).json.return_path_verified

const recheck = (at: Date) =>
  withServices(rig.app, Effect.flatMap(Domains, (d) => d.recheck(at, at)), {
    HERALD_DNS_SERVERS: rig.dns.address,
    HERALD_HOSTNAME: HOSTNAME
  })

describe("the envelope sender's domain", () => {
  it("moves to the customer's return-path subdomain once its MX is verified, and back when the record is removed", async () => {
    rig.dns.set(returnPathName(), { MX: [{ preference: 10, exchange: HOSTNAME }] })
    const verified = await rig.app.request("POST", `/v1/client/domains/${sender.domain}/verify`, { token: sender.token })
    expect(verified.status).toBe(200)
    expect(await returnPathVerified()).toBe(true)

    const onSubdomain = await deliver("first@rcpt.example")
    expect(onSubdomain.mailFrom).toMatch(/^b-dlv_[A-Za-z0-9]+-[0-9a-f]{8}@/)
    expect(onSubdomain.mailFrom.split("@")[1]).toBe(returnPathName())

    rig.dns.set(returnPathName(), undefined)
    await recheck(new Date(Date.now() + 7 * 3_600_000))
    expect(await returnPathVerified()).toBe(false)

    const back = await deliver("second@rcpt.example")
    expect(back.mailFrom.split("@")[1]).toBe(BOUNCE_DOMAIN)
  })
})
