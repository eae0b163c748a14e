/**
 * GET /v1/admin/inbound over HTTP, against what really arrived at the MX listener over SMTP: a
 * forged feedback report about a message Herald delivered (refused: not from an authenticated
 * feedback loop) and a DSN on the message's VERP address (acted on). `refused=true` lists the
 * first with its reason and not the second; the route is the operator's only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, dmarcMail, dsn, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { sendRaw } from "../support/smtp-client.ts"

const FBL = "fbl@bounces.mta.herald.test"

let rig: DeliveryRig
let sender: Sender

const processedCount = async () =>
  (await query<{ n: number }>(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM inbound_messages WHERE state <> 'received'"))[0]!.n

/** Sends `raw` over SMTP and waits until the processor is done with it. */
const deliverInbound = async (to: string, raw: string, from: string) => {
  const before = await processedCount()
  expect((await sendRaw(rig.app.smtpPort, { from, to: [to] }, raw)).code).toBe(250)
  await eventually(async () => ((await processedCount()) > before ? true : undefined), "the inbound message processed")
}

const inbound = (q = "", token?: string) => rig.app.request("GET", `/v1/admin/inbound${q}`, token === undefined ? {} : { token })

let returnPath = ""

beforeAll(async () => {
  rig = await startDeliveryRig()
  rig.route("rcpt.test")
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  const res = await rig.app.request("POST", "/v1/mail/send", {
    token: sender.token,
    body: sendBody(sender, ["a@rcpt.test", "b@rcpt.test"])
  })
  expect(res.status).toBe(202)
  await rig.sink.waitFor(1)
  const received = rig.sink.received[0]!
  returnPath = received.mailFrom
  const headers = headersOf(received.raw)
  // Forged: an unauthenticated sender naming a delivery by the original's Message-ID.
  await deliverInbound(FBL, arf(FBL, "b@rcpt.test", headers), "feedback@fbl.isp.test")
  // Genuine: a DSN to the delivery's VERP return path.
  await deliverInbound(returnPath, dsn(returnPath, received.rcptTo[0]!, "5.1.1", headers), "")
}, 60_000)
afterAll(async () => {
  await rig?.stop()
})

describe("GET /v1/admin/inbound", () => {
  it("refused=true lists the refused report with why, and not the one acted on", async () => {
    const res = await inbound("?refused=true")
    expect(res.status).toBe(200)
    expect(res.json.total).toBe(1)
    expect(res.json.items).toHaveLength(1)
    expect(res.json.items[0]).toMatchObject({
      kind: "complaint",
      state: "processed",
      refused: true,
      mail_from: "feedback@fbl.isp.test",
      rcpt_to: [FBL],
      remote_address: "127.0.0.1",
      authenticated_as: null
    })
    expect(res.json.items[0].reason).toMatch(/not from an authenticated feedback loop/)
    expect(res.json.items[0].size).toBeGreaterThan(100)
  })

  it("lists everything newest first without the filter, and only the others with refused=false", async () => {
    const all = await inbound()
    expect(all.status).toBe(200)
    expect(all.json.total).toBe(2)
    expect(all.json.items.map((i: { kind: string }) => i.kind)).toEqual(["bounce", "complaint"])
    expect(all.json.items[0]).toMatchObject({ refused: false, reason: null, rcpt_to: [returnPath] })
    const others = await inbound("?refused=false")
    expect(others.json.total).toBe(1)
    expect(others.json.items[0].kind).toBe("bounce")
    const paged = await inbound("?limit=1&offset=1")
    expect(paged.json).toMatchObject({ total: 2, limit: 1, offset: 1 })
    expect(paged.json.items[0].kind).toBe("complaint")
  })

  it("lists a report the parsers could not read as refused, with the parser's error", async () => {
    const to = "dmarc@bounces.mta.herald.test"
    await deliverInbound(to, dmarcMail(to, "broken", "<feedback><report_metadata>never closed"), "noreply-dmarc@receiver.test")
    const res = await inbound("?refused=true")
    expect(res.json.total).toBe(2)
    expect(res.json.items[0]).toMatchObject({ kind: "dmarc", state: "failed", refused: true })
    expect(res.json.items[0].reason).toEqual(expect.any(String))
    expect(res.json.items[0].reason.length).toBeGreaterThan(0)
  })

  it("is refused to a non-admin key, and bounds its parameters", async () => {
    const res = await inbound("?refused=true", sender.token)
    expect(res.status).toBe(403)
    expect(res.json.error).toMatchObject({ type: "permission_error", code: "forbidden" })
    for (const q of ["?refused=yes", "?limit=0", "?limit=201", "?offset=-1"]) {
      const bad = await inbound(q)
      expect(bad.status).toBe(400)
      expect(bad.json.error.code).toBe("validation_failed")
    }
  })
})
