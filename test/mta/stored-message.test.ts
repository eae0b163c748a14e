/**
 * The stored message (src/mta/queue/StoredMessage.ts) end to end: a send of 200 personalizations
 * with a 1 MB attachment stores its shared part once (~1 MB in the tables, not 200 MB) and still
 * delivers every personalization with the attachment; a row written by an older version (the whole
 * single-personalization request in messages.content) still delivers; and a row that does not
 * decode fails its delivery with email.failed and a clear error while the MTA goes on.
 */
import { randomBytes } from "node:crypto"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { eventsOf, waitForState } from "./outbound.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("many.example")
  rig.route("legacy.example")
  rig.route("broken.example")
})
afterAll(() => rig.stop())

/** Queues one message as SQL written by anything (an older version, by hand) would: `shared` null is the legacy form. */
const queueRow = async (own: unknown, shared: unknown, recipient: string) => {
  const id = `msg_row${Date.now()}${Math.random().toString(36).slice(2, 8)}`
  const contentId = shared === null ? null : `mct_${id}`
  if (contentId !== null) {
    await query(rig.app.databaseUrl, "INSERT INTO message_contents (id, account_id, content, created_at) VALUES ($1, $2, $3::jsonb, now())",
      [contentId, sender.accountId, JSON.stringify(shared)])
  }
  await query(rig.app.databaseUrl, `WITH m AS (
      INSERT INTO messages (id, account_id, key_id, request_id, personalization_index, from_email, from_domain, subject, content, content_id, created_at)
      VALUES ($1, $2, $3, 'req_row', 0, $4, $5, 'Row', $6::jsonb, $7, now()))
    INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind, next_attempt_at, created_at, updated_at)
    VALUES ('dlv_' || $1, $1, $2, $3, $8, split_part($8, '@', 2), 'to', now(), now(), now())`,
    [id, sender.accountId, sender.keyId, sender.from, sender.domain, JSON.stringify(own), contentId, recipient])
  return id
}

const send = (body: unknown) => rig.app.request("POST", "/v1/mail/send", { token: sender.token, body })
const states = ["sent", "failed", "bounced", "deferred"]

describe("the stored message", () => {
  it("stores a send's shared part once: 200 personalizations and a 1 MB attachment take ~1 MB, and each is delivered with it", async () => {
    const attachment = randomBytes(1_048_576)
    const personalizations = Array.from({ length: 200 }, (_, i) => ({ to: [{ email: `p${i}@many.example` }] }))
    const before = rig.sink.received.length
    const res = await send(sendBody(sender, "x", {
      personalizations,
      attachments: [{ content: attachment.toString("base64"), filename: "data.bin", type: "application/octet-stream" }]
    }))
    expect(res.status).toBe(202)
    const [size] = await query<{ bytes: number }>(rig.app.databaseUrl, `SELECT
      (pg_total_relation_size('messages') + pg_total_relation_size('message_contents'))::int AS bytes`)
    // Random bytes in base64 do not compress: one copy is 1.4 MB, 200 copies would be 280 MB.
    expect(size!.bytes).toBeLessThan(3 * 1_048_576)

    await rig.sink.waitFor(before + 200, 120_000)
    const mine = rig.sink.received.slice(before)
    expect(new Set(mine.flatMap((m) => m.rcptTo))).toEqual(new Set(personalizations.map((p) => p.to[0]!.email)))
    for (const m of [mine[0]!, mine[199]!]) {
      const parsed = await simpleParser(m.raw)
      expect(parsed.headers.get("x-herald-channel")).toBe("transactional")
      expect(parsed.attachments.map((a) => a.filename)).toEqual(["data.bin"])
      expect(parsed.attachments[0]!.content.equals(attachment)).toBe(true)
    }
  }, 150_000)

  it("delivers a row written by an older version (the whole request in messages.content, no shared part)", async () => {
    const before = rig.sink.received.length
    const messageId = await queueRow(sendBody(sender, "old@legacy.example", { subject: "Legacy form" }), null, "old@legacy.example")
    const row = await waitForState(rig.app, messageId, "old@legacy.example", states)
    expect(row.state).toBe("sent")
    await rig.sink.waitFor(before + 1)
    const parsed = await simpleParser(rig.sink.received.filter((m) => m.rcptTo.includes("old@legacy.example")).at(-1)!.raw)
    expect(parsed.subject).toBe("Legacy form")
    expect(parsed.headers.get("x-herald-message-id")).toBe(messageId)
  })

  it("fails a row that does not decode with email.failed naming the field, and goes on delivering", async () => {
    const { personalizations, ...shared } = sendBody(sender, "bad@broken.example")
    const messageId = await queueRow(
      { _tag: "structured", origin: "transactional", channel: "transactional", personalization: personalizations[0] },
      { ...shared, from: { email: "not an address" } },
      "bad@broken.example"
    )
    const row = await waitForState(rig.app, messageId, "bad@broken.example", states)
    expect(row.state).toBe("failed")
    expect(row.last_reply).toBe("the stored message does not decode: message.from.email: must be a valid email address (local@domain)")
    const events = await eventsOf(rig.app, "email.failed", messageId)
    expect(events.map((e) => e.payload)).toEqual([expect.objectContaining({ to: ["bad@broken.example"], error: row.last_reply })])

    const next = await send(sendBody(sender, "after@broken.example"))
    expect((await waitForState(rig.app, next.json.items[0].message_id, "after@broken.example", states)).state).toBe("sent")
  })
})
