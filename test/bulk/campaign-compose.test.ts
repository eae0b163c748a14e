/**
 * Which references get tracking tokens when composed (DESIGN "Tracking": campaigns only): a
 * campaign's own delivery gets its recipient's tokens in place of the frozen HTML's placeholders;
 * a test-send of the same content and a sequence step are composed without tokens; a campaign
 * message without its delivery id is refused rather than sent with placeholders in it. The render
 * comes from the render workers' own task runner (src/bulk/render/tasks.ts), run in this thread.
 */
import { Option } from "effect"
import { simpleParser } from "mailparser"
import { describe, expect, it } from "vitest"
import { type BulkLinks, referenceComposing, referenceRender } from "../../src/bulk/delivery-port.ts"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { makeTaskRunner } from "../../src/bulk/render/tasks.ts"
import { rewriteForTracking } from "../../src/bulk/tracking/rewrite.ts"
import { readClickToken, readOpenToken } from "../../src/bulk/tracking/tokens.ts"
import type { Reference } from "../../src/mta/compose/BulkContent.ts"
import { composeStored, type ReferenceComposing } from "../../src/mta/compose/compose.ts"
import type { StoredMessage } from "../../src/mta/queue/StoredMessage.ts"

const tokens = makeTokens("a test secret of enough length for hmac")
const links: BulkLinks = { tokens, baseUrl: "https://herald.test", bounceDomain: "bounces.herald.test" }
const bulk: ReferenceComposing = { content: referenceComposing(links), accountId: "acc_1" }
const tracked = rewriteForTracking(`<html><body><p>Hi {{ email }}</p><a href="https://shop.example/a">A</a></body></html>`, {
  trackUrl: "https://t.herald.test",
  baseUrl: "https://herald.test"
})
const message = { from: { email: "news@shop.example" }, subject: "News", content: [{ type: "text/html" as const, value: tracked.html }] }
const contact = { channel: "bulk" as const, contact_id: "ct_1", to: { email: "ada@rcpt.example" }, variables: { email: "ada@rcpt.example" }, message }
const options = { messageId: "msg_1", sendingDomain: "shop.example", date: new Date("2026-01-01T00:00:00Z"), bulk }
const runTask = makeTaskRunner()
const renderedOf = async (stored: Reference) => {
  const { content, scope } = referenceRender(stored, links, bulk.accountId)
  const answer = await runTask({ op: "content", key: JSON.stringify(content), content, scope })
  if (answer._tag !== "rendered") throw new Error(`not rendered: ${JSON.stringify(answer)}`)
  return answer.rendered
}
const htmlOf = async (stored: Reference, deliveryId?: string) =>
  String((await simpleParser(await composeStored(stored, { ...options, deliveryId, rendered: await renderedOf(stored) }))).html)

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
    const stored: Reference = { _tag: "campaign", origin: "campaign", campaign_id: "cp_1", ...contact }
    await expect(composeStored(stored, { ...options, rendered: await renderedOf(stored) })).rejects.toThrow(/delivery id/)
  })

  it("refuse a reference without its render", async () => {
    const stored: StoredMessage = { _tag: "sequence", origin: "sequence", sequence_id: "sq_1", step: 1, ...contact }
    await expect(composeStored(stored, options)).rejects.toThrow(/need their render/)
  })
})
