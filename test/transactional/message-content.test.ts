/**
 * GET /v1/mail/messages/{id}/content and /content/html (issue 28, view 2) against a real appliance,
 * a real SMTP sink and the simulator: each kind of mail (transactional with attachments, a
 * template's test-send, a double opt-in confirmation, a campaign message, a sequence step) is shown
 * as the sink received it — the same Message-ID, Date, Subject, text and html — except what acts
 * for its recipient: for a real recipient a campaign's links are untracked, its pixel gone and the
 * confirm and unsubscribe tokens redacted (List-Unsubscribe too); for a simulator recipient they
 * stay live and work. Owner: another account's message and another key's bulk message are 404.
 * Viewing changes no row.
 */
import { type ParsedMail, simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { readClickToken, readOpenToken } from "../../src/bulk/tracking/tokens.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody, siblingKey } from "../support/sending.ts"

const TRACK = "http://track.herald.test"
const SIM = "simulator.herald.invalid"
const PDF = Buffer.from("%PDF-1.4 a receipt of forty bytes or so.").toString("base64")
const PNG = Buffer.from("not really a png, but bytes").toString("base64")
const CAMPAIGN_HTML = `<html><body><p>Dear {{ email }}</p>
<a href="https://shop.example/sale?x=1&amp;y=2">Sale</a> <a href="mailto:help@shop.example">Write</a>
<a href="{{ unsubscribe_url }}">Unsubscribe</a></body></html>`

let rig: DeliveryRig
let sender: Sender
let other: Sender

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const parse = (raw: Buffer) => simpleParser(raw, { keepCidLinks: true, skipHtmlToText: true })

/** The message the sink received for `rcpt` (the newest), parsed. */
const receivedBy = async (rcpt: string): Promise<{ parsed: ParsedMail; raw: Buffer }> => {
  const m = await eventually(async () => [...rig.sink.received].reverse().find((r) => r.rcptTo.includes(rcpt)), `mail to ${rcpt}`, 30_000)
  return { parsed: await parse(m.raw), raw: m.raw }
}

/** The id of the newest message to `rcpt`. */
const messageTo = async (rcpt: string) => {
  const row = await eventually(async () =>
    (await db<{ message_id: string }>("SELECT message_id FROM deliveries WHERE recipient = $1 ORDER BY created_at DESC LIMIT 1", [rcpt]))[0], `a message to ${rcpt}`, 30_000)
  return row.message_id
}

interface View {
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly text: string | null
  readonly html: string | null
  readonly attachments: ReadonlyArray<unknown>
}

const header = (view: Pick<View, "headers">, name: string) =>
  view.headers.filter((h) => h.name.toLowerCase() === name.toLowerCase()).map((h) => h.value)

/** What the view and the delivered message must share. */
const expectAsDelivered = (view: View, parsed: ParsedMail) => {
  expect(header(view, "Message-ID")).toEqual([parsed.messageId])
  expect(header(view, "Subject")).toEqual([parsed.subject])
  expect(new Date(header(view, "Date")[0]!).getTime()).toBe(parsed.date!.getTime())
  expect(header(view, "X-Herald-Message-Id")).toEqual([parsed.headers.get("x-herald-message-id")])
  expect(header(view, "DKIM-Signature")).toEqual([])
  expect(parsed.headers.get("dkim-signature")).toBeDefined()
}

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_TRACK_URL: TRACK })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
}, 60_000)
afterAll(async () => {
  await rig?.stop()
})

describe("transactional mail", () => {
  it("answers the headers, text, html and attachments (sizes, no bytes) as the sink received them", async () => {
    const sent = await api("POST", "/v1/mail/send", sendBody(sender, "ada@dest.example", {
      subject: "Your receipt ✓",
      content: [
        { type: "text/plain", value: "Thank you for your order." },
        { type: "text/html", value: "<p>Thank you for your order.</p><img src=\"cid:logo\">" }
      ],
      attachments: [
        { filename: "receipt.pdf", content: PDF, type: "application/pdf" },
        { filename: "logo.png", content: PNG, type: "image/png", content_id: "logo" }
      ]
    }))
    expect(sent.status).toBe(202)
    const { parsed } = await receivedBy("ada@dest.example")
    const id = sent.json.items[0].message_id as string
    const view = await api("GET", `/v1/mail/messages/${id}/content`)
    expect(view.json).not.toHaveProperty("error")
    expect(view.status).toBe(200)
    expectAsDelivered(view.json, parsed)
    expect(view.json.text).toBe(parsed.text)
    expect(view.json.html).toBe(parsed.html)
    expect(view.json.attachments).toEqual(expect.arrayContaining([
      { filename: "receipt.pdf", content_type: "application/pdf", size: Buffer.from(PDF, "base64").length, content_id: null },
      { filename: "logo.png", content_type: "image/png", size: Buffer.from(PNG, "base64").length, content_id: "logo" }
    ]))
    expect(view.json.attachments).toHaveLength(2)
    expect(view.text).not.toContain(PDF)
  })
})

const page = (method: "GET" | "POST", path: string) =>
  rig.app.request(method, path, { token: null, ...(method === "POST" ? { rawBody: "", headers: { "content-type": "application/x-www-form-urlencoded" } } : {}) })
const TOKEN = /\/(confirm|u)\/([A-Za-z0-9_.-]+)/
/** `text` with every confirm and unsubscribe token (pages and mailto) as the view shows it to no one. */
const redacted = (text: string) =>
  text.replace(/\/(confirm|u)\/[A-Za-z0-9_.-]+/g, "/$1/redacted").replace(/(mailto:unsubscribe@[^?]+\?subject=)[A-Za-z0-9_.-]+/g, "$1redacted")
const content = async (id: string, token = sender.token) => {
  const view = await api("GET", `/v1/mail/messages/${id}/content`, undefined, token)
  expect(view.json).not.toHaveProperty("error")
  expect(view.status).toBe(200)
  return view.json as View
}
const membership = async (listId: string, email: string) => {
  const contact = await api("GET", `/v1/bulk/contacts/${encodeURIComponent(email)}`)
  return (contact.json.lists as Array<{ list_id: string; status: string }>).find((l) => l.list_id === listId)?.status
}
const optInList = async (name: string) => {
  const created = await api("POST", "/v1/bulk/lists", { name })
  expect(created.status).toBe(201)
  const on = await api("PUT", `/v1/bulk/lists/${created.json.id}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${sender.domain}` })
  expect(on.status).toBe(200)
  return created.json.id as string
}

describe("bulk mail to a real recipient: shown as delivered, acting for no one", () => {
  it("a template's test-send", async () => {
    const t = await api("POST", "/v1/bulk/templates", { name: "T", subject: "Hello {{ name }}", html: "<p>Hi {{ name }}</p>", from_email: sender.from })
    const sent = await api("POST", `/v1/bulk/templates/${t.json.id}/test-send`, { to_email: "tester@dest.example", sample_vars: { name: "Ada" } })
    expect(sent.status).toBe(200)
    const { parsed } = await receivedBy("tester@dest.example")
    const view = await content(sent.json.message_id)
    expectAsDelivered(view, parsed)
    expect(view.text).toBe(parsed.text)
    expect(view.html).toBe(parsed.html)
  })

  it("a double opt-in confirmation: its confirm link redacted in the text and the html", async () => {
    const listId = await optInList("Weekly")
    expect((await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["joiner@dest.example"] })).status).toBe(200)
    const { parsed } = await receivedBy("joiner@dest.example")
    const view = await content(await messageTo("joiner@dest.example"))
    expectAsDelivered(view, parsed)
    expect(TOKEN.exec(parsed.text!)?.[2]).not.toBe("redacted")
    expect(view.text).toBe(redacted(parsed.text!))
    expect(view.html).toBe(redacted(String(parsed.html)))
    expect(view.text).toContain("/confirm/redacted")
    // The redacted link confirms nothing.
    expect((await page("POST", "/confirm/redacted")).status).toBe(404)
    expect(await membership(listId, "joiner@dest.example")).toBe("pending")
  })

  it("a campaign message: links untracked, no pixel, unsubscribe redacted in the body and List-Unsubscribe", async () => {
    const list = await api("POST", "/v1/bulk/lists", { name: "fans" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["fan@dest.example", `delivered+fan@${SIM}`] })).status).toBe(200)
    const c = await api("POST", "/v1/bulk/campaigns", { name: "News", from_email: sender.from, subject: "News for {{ email }}", html: CAMPAIGN_HTML, list_ids: [list.json.id] })
    expect(c.status).toBe(201)
    expect((await api("POST", `/v1/bulk/campaigns/${c.json.id}/send`)).status).toBe(200)
    const { parsed, raw } = await receivedBy("fan@dest.example")
    const sentHtml = String(parsed.html)
    expect(sentHtml).toContain(`${TRACK}/o/`)
    expect(sentHtml).toContain(`${TRACK}/c/`)
    const view = await content(await messageTo("fan@dest.example"))
    expectAsDelivered(view, parsed)
    const untracked = sentHtml
      .replace(/<img src="http:\/\/track\.herald\.test\/o\/[^"]+"[^>]*\/>/, "")
      .replace(/http:\/\/track\.herald\.test\/c\/[A-Za-z0-9_.-]+/g, "https://shop.example/sale?x=1&amp;y=2")
    expect(view.html).toBe(redacted(untracked))
    expect(view.html).not.toContain(TRACK)
    expect(view.html).toContain("/u/redacted")
    expect(view.text).toBe(redacted(parsed.text!))
    const sentUnsubscribe = /^List-Unsubscribe: (.*)$/m.exec(raw.toString().replace(/\r?\n[ \t]+/g, " "))![1]!.trim()
    expect(TOKEN.exec(sentUnsubscribe)?.[2]).not.toBe("redacted")
    const [shown] = header(view, "List-Unsubscribe")
    expect(shown).toBe(redacted(sentUnsubscribe))
    expect(shown).toMatch(/^<http[^>]+\/u\/redacted>, <mailto:unsubscribe@[^?]+\?subject=redacted>$/)
    expect(header(view, "List-Unsubscribe-Post")).toEqual(["List-Unsubscribe=One-Click"])
  })

  it("a sequence step", async () => {
    const seq = await api("POST", "/v1/bulk/sequences", { name: "Drip", from_email: sender.from })
    expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/steps`, { subject: "Step one", html: "<p>One <a href=\"{{ unsubscribe_url }}\">out</a></p>", offset_seconds: 0 })).status).toBe(201)
    const list = await api("POST", "/v1/bulk/lists", { name: "drip" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["drip@dest.example"] })).status).toBe(200)
    expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(1)
    const { parsed } = await receivedBy("drip@dest.example")
    const view = await content(await messageTo("drip@dest.example"))
    expectAsDelivered(view, parsed)
    expect(view.html).toBe(redacted(String(parsed.html)))
    expect(view.html).toContain("/u/redacted")
    expect(header(view, "List-Unsubscribe")[0]).toContain("/u/redacted>")
  })
})

describe("bulk mail to a simulator recipient: live, so it can be tried from the console", () => {
  it("a campaign message keeps its tracking for its own delivery and a working unsubscribe link", async () => {
    const rcpt = `delivered+sim@${SIM}`
    const list = await api("POST", "/v1/bulk/lists", { name: "simulated" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: [rcpt] })).status).toBe(200)
    const c = await api("POST", "/v1/bulk/campaigns", { name: "Sim", from_email: sender.from, subject: "Hi", html: CAMPAIGN_HTML, list_ids: [list.json.id] })
    expect((await api("POST", `/v1/bulk/campaigns/${c.json.id}/send`)).status).toBe(200)
    const id = await messageTo(rcpt)
    const [delivery] = await db<{ id: string }>("SELECT id FROM deliveries WHERE message_id = $1", [id])
    const view = await content(id)
    const [secret] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
    const tokens = makeTokens(secret!.value)
    const pixel = new RegExp(`<img src="${TRACK}/o/([^"]+)"`).exec(view.html!)
    const open = readOpenToken(tokens, pixel![1]!, Date.now())
    expect(open._tag === "Some" ? open.value : undefined).toEqual({ deliveryId: delivery!.id, campaignId: c.json.id })
    const click = new RegExp(`href="${TRACK}/c/([^"]+)"`).exec(view.html!)
    expect(readClickToken(tokens, click![1]!, Date.now())._tag).toBe("Some")
    const unsubscribe = TOKEN.exec(header(view, "List-Unsubscribe")[0]!)!
    expect(unsubscribe[2]).not.toBe("redacted")
    const shown = await page("GET", `/u/${unsubscribe[2]}`)
    expect(shown.status).toBe(200)
    expect(view.html).toContain(`/u/${unsubscribe[2]}`)
  })

  it("a confirmation keeps its confirm link, and pressing it confirms the membership", async () => {
    const rcpt = `delivered+join@${SIM}`
    const listId = await optInList("Simulated opt-in")
    expect((await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [rcpt] })).status).toBe(200)
    const view = await content(await messageTo(rcpt))
    const link = TOKEN.exec(view.text!)!
    expect(link[1]).toBe("confirm")
    expect(link[2]).not.toBe("redacted")
    expect(view.html).toContain(link[0])
    expect(await membership(listId, rcpt)).toBe("pending")
    expect((await page("POST", link[0])).status).toBe(200)
    expect(await membership(listId, rcpt)).toBe("confirmed")
  })
})

describe("whose content", () => {
  it("another account's message is 404, and another key's bulk message (content and timeline); another key of the account sees its transactional mail", async () => {
    const sent = await api("POST", "/v1/mail/send", sendBody(sender, `delivered@${SIM}`, { content: [{ type: "text/html", value: "<p>hi</p>" }] }))
    expect(sent.status).toBe(202)
    const transactional = sent.json.items[0].message_id as string
    const t = await api("POST", "/v1/bulk/templates", { name: "Owned", subject: "S", html: "<p>owned</p>", from_email: sender.from })
    const bulk = (await api("POST", `/v1/bulk/templates/${t.json.id}/test-send`, { to_email: `delivered+t@${SIM}` })).json.message_id as string
    for (const route of ["content", "content/html"]) {
      for (const id of [transactional, bulk]) {
        const foreign = await api("GET", `/v1/mail/messages/${id}/${route}`, undefined, other.token)
        expect(foreign.status).toBe(404)
        expect(foreign.json.error).toMatchObject({ type: "invalid_request_error", code: "not_found" })
      }
      expect((await api("GET", `/v1/mail/messages/msg_nothing/${route}`)).status).toBe(404)
    }
    const sibling = await siblingKey(rig.app, sender)
    const ofSibling = await api("GET", `/v1/mail/messages/${bulk}/content`, undefined, sibling.token)
    expect(ofSibling.status).toBe(404)
    expect(ofSibling.json.error.code).toBe("not_found")
    expect((await api("GET", `/v1/mail/messages/${bulk}/content/html`, undefined, sibling.token)).status).toBe(404)
    expect((await api("GET", `/v1/mail/messages/${transactional}/content`, undefined, sibling.token)).status).toBe(200)
    expect((await api("GET", `/v1/mail/messages/${bulk}/content`)).status).toBe(200)
    // The timeline follows the same owner: another key's bulk message is not found there either.
    expect((await api("GET", `/v1/mail/messages/${bulk}`, undefined, sibling.token)).status).toBe(404)
    expect((await api("GET", `/v1/mail/messages/${transactional}`, undefined, sibling.token)).status).toBe(200)
    expect((await api("GET", `/v1/mail/messages/${bulk}`)).status).toBe(200)
  })
})

describe("GET …/content/html", () => {
  const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:"

  it("serves the html part alone under its policy, links opening in a new tab", async () => {
    const html = "<!DOCTYPE html><html><head><base target=\"_self\"></head><body><script>alert(1)</script><a href=\"https://x.example/\">x</a></body></html>"
    const sent = await api("POST", "/v1/mail/send", sendBody(sender, `delivered@${SIM}`, { content: [{ type: "text/html", value: html }] }))
    const id = sent.json.items[0].message_id as string
    const res = await api("GET", `/v1/mail/messages/${id}/content/html`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(res.headers.get("content-security-policy")).toBe(CSP)
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const shown = (await content(id)).html!
    expect(shown.startsWith(html)).toBe(true)
    expect(res.text).toBe(`<!DOCTYPE html><base target="_blank">${shown.slice("<!DOCTYPE html>".length)}`)
    const images = await api("GET", `/v1/mail/messages/${id}/content/html?images=1`)
    expect(images.headers.get("content-security-policy")).toBe(`${CSP} https: http:`)
    expect((await api("GET", `/v1/mail/messages/${id}/content/html?images=0`)).headers.get("content-security-policy")).toBe(CSP)
    const bad = await api("GET", `/v1/mail/messages/${id}/content/html?images=yes`)
    expect(bad.status).toBe(400)
    expect(bad.json.error.code).toBe("validation_failed")
  })

  it("is 404 for a message without an html part", async () => {
    const sent = await api("POST", "/v1/mail/send", sendBody(sender, `delivered@${SIM}`))
    const id = sent.json.items[0].message_id as string
    expect((await content(id)).html).toBeNull()
    const res = await api("GET", `/v1/mail/messages/${id}/content/html`)
    expect(res.status).toBe(404)
    expect(res.json.error.code).toBe("not_found")
  })
})

describe("viewing", () => {
  it("changes no row: no open, click, send, event or delivery", async () => {
    await new Promise((r) => setTimeout(r, 1_500))
    const snapshot = () =>
      db(`SELECT (SELECT count(*) FROM tracking_hits)::int AS hits, (SELECT count(*) FROM events)::int AS events,
        (SELECT count(*) FROM messages)::int AS messages, (SELECT count(*) FROM deliveries)::int AS deliveries,
        (SELECT max(updated_at) FROM deliveries) AS touched, (SELECT sum(sent) FROM account_usage)::int AS used,
        (SELECT string_agg(id || status || queued_count, ',' ORDER BY id) FROM campaigns) AS campaigns,
        (SELECT string_agg(contact_id || status, ',' ORDER BY contact_id) FROM list_memberships) AS members`)
    const before = await snapshot()
    const ids = await db<{ id: string }>("SELECT id FROM messages WHERE account_id = $1", [sender.accountId])
    expect(ids.length).toBeGreaterThan(5)
    for (const { id } of ids) expect((await api("GET", `/v1/mail/messages/${id}/content`)).status).toBe(200)
    expect(await snapshot()).toEqual(before)
  })
})
