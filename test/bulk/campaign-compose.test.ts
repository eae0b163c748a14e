/**
 * Which references get tracking tokens when composed (DESIGN "Tracking": campaigns only): a
 * campaign's own delivery gets its recipient's tokens in place of the frozen HTML's placeholders;
 * a test-send of the same content and a sequence step are composed without tokens; a campaign
 * message without its delivery id is refused rather than sent with placeholders in it.
 */
import { Option } from "effect"
import { simpleParser } from "mailparser"
import { describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { makeRenderEngine } from "../../src/bulk/render/engine.ts"
import { rewriteForTracking } from "../../src/bulk/tracking/rewrite.ts"
import { readClickToken, readOpenToken } from "../../src/bulk/tracking/tokens.ts"
import type { StoredMessage } from "../../src/mta/queue/StoredMessage.ts"
import { type BulkRendering, composeStored, RenderOutOfTime } from "../../src/transactional/compose.ts"

const tokens = makeTokens("a test secret of enough length for hmac")
const bulk: BulkRendering = { engine: makeRenderEngine(), tokens, baseUrl: "https://herald.test", bounceDomain: "bounces.herald.test", accountId: "acc_1" }
const tracked = rewriteForTracking(`<html><body><p>Hi {{ email }}</p><a href="https://shop.example/a">A</a></body></html>`, {
  trackUrl: "https://t.herald.test",
  baseUrl: "https://herald.test"
})
const message = { from: { email: "news@shop.example" }, subject: "News", content: [{ type: "text/html" as const, value: tracked.html }] }
const contact = { channel: "bulk" as const, contact_id: "ct_1", to: { email: "ada@rcpt.example" }, variables: { email: "ada@rcpt.example" }, message }
const options = { messageId: "msg_1", sendingDomain: "shop.example", date: new Date("2026-01-01T00:00:00Z"), bulk }
const htmlOf = async (stored: StoredMessage, deliveryId?: string) =>
  String((await simpleParser(await composeStored(stored, { ...options, deliveryId }))).html)

describe("tracking tokens at compose time", () => {
  it("fill a campaign delivery's placeholders with tokens naming that delivery", async () => {
    const html = await htmlOf({ _tag: "campaign", origin: "campaign", campaign_id: "cp_1", ...contact }, "dlv_1")
    expect(html).toContain("Hi ada@rcpt.example")
    expect(html).not.toContain("__herald_")
    const open = /src="https:\/\/t\.herald\.test\/o\/([^"]+)"/.exec(html)![1]!
    const click = /href="https:\/\/t\.herald\.test\/c\/([^"]+)"/.exec(html)![1]!
    expect(Option.getOrUndefined(readOpenToken(tokens, open, Date.now()))).toEqual({ deliveryId: "dlv_1", campaignId: "cp_1" })
    expect(Option.getOrUndefined(readClickToken(tokens, click, Date.now()))).toEqual({ deliveryId: "dlv_1", campaignId: "cp_1", linkIndex: 0 })
  })

  it("leave a test-send and a sequence step without tokens", async () => {
    const testSend = await htmlOf({ _tag: "campaign", origin: "test_send", campaign_id: "cp_1", ...contact }, "dlv_2")
    const step = await htmlOf({ _tag: "sequence", origin: "sequence", sequence_id: "sq_1", step: 1, ...contact }, "dlv_3")
    for (const html of [testSend, step]) {
      expect(html).toContain("__herald_open__")
      expect(html).not.toMatch(/\/o\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"/)
    }
  })

  it("refuse a campaign message without its delivery id", async () => {
    await expect(composeStored({ _tag: "campaign", origin: "campaign", campaign_id: "cp_1", ...contact }, options)).rejects.toThrow(/delivery id/)
  })

  it("tell a render that ran out of time (the MTA defers it) from content that can never render (it fails)", async () => {
    const withHtml = (value: string): StoredMessage => ({
      _tag: "sequence",
      origin: "sequence",
      sequence_id: "sq_1",
      step: 1,
      ...contact,
      message: { ...message, content: [{ type: "text/html", value }] }
    })
    // Within the memory limit, beyond the 250 ms render limit on any machine.
    const slow = composeStored(withHtml("{% for i in (1..3000000) %}{% endfor %}"), options)
    await expect(slow).rejects.toBeInstanceOf(RenderOutOfTime)
    await expect(slow).rejects.toThrow(/render limit exceeded/)
    const huge = composeStored(withHtml("{% for i in (1..100000000) %}{% endfor %}"), options)
    await expect(huge).rejects.toThrow(/memory alloc limit exceeded/)
    await expect(huge).rejects.not.toBeInstanceOf(RenderOutOfTime)
  })
})
