/**
 * Unsubscribe links (RFC 2369, RFC 8058) against a running appliance: the one-click POST, the
 * page and its button, and a mail to the mailto address through the MX listener, each with tokens
 * the link module mints from the appliance's own secret; every one is the one fact (account
 * suppression `unsubscribe`, every contact of the address in the account `unsubscribed`, one
 * `contact.unsubscribed` webhook per contact to its key). Bad tokens change nothing; a feedback
 * loop's opt-out is the same fact; DKIM covers both unsubscribe headers.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { unsubscribeHeaders, unsubscribeToken } from "../../src/bulk/public/unsubscribe-link.ts"
import { query } from "../support/database.ts"
import { verifyDkimAgainstPublished } from "../support/dkim.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody, siblingKey } from "../support/sending.ts"
import { sendRaw } from "../support/smtp-client.ts"

const BOUNCE_DOMAIN = "bounces.mta.herald.test"

let rig: DeliveryRig
let sender: Sender
let other: Sender
let sibling: { token: string; keyId: string }
let tokens: ReturnType<typeof makeTokens>
let receiver: http.Server
/** Webhooks received, with the key whose URL they came to (`/hook/<key id>`). */
const hooks: Array<{ keyId: string; event: string; data: { email: string } }> = []

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      const parsed = JSON.parse(body)
      hooks.push({ keyId: req.url!.split("/").pop()!, event: parsed.event, data: parsed.data ?? parsed })
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
  rig = await startDeliveryRig({ HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  sibling = await siblingKey(rig.app, sender)
  rig.route("rcpt.test")
  const hookBase = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`
  for (const [keyId, token] of [[sender.keyId, sender.token], [sibling.keyId, sibling.token], [other.keyId, other.token]] as const) {
    const patched = await rig.app.request("PATCH", `/v1/client/keys/${keyId}`, { token, body: { label: "tests", webhook_url: `${hookBase}/${keyId}` } })
    expect(patched.status).toBe(200)
  }
  const [secret] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
  tokens = makeTokens(secret!.value)
})
afterAll(async () => {
  await rig?.stop()
  receiver.closeAllConnections()
  receiver.close()
})

const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const tokenFor = (email: string, accountId = sender.accountId) => unsubscribeToken(tokens, { accountId, email, source: "cp_test" })
const ONE_CLICK = "List-Unsubscribe=One-Click"
const post = (path: string, body: string | FormData = ONE_CLICK, contentType: string | null = "application/x-www-form-urlencoded") =>
  fetch(`${rig.app.baseUrl}${path}`, {
    method: "POST",
    body,
    redirect: "manual",
    ...(contentType === null ? {} : { headers: { "content-type": contentType } })
  })

/** The address's contacts on the sender's two keys and on another account's key, all active. */
const contactsOf = async (email: string) => {
  const mine = await api("POST", "/v1/bulk/contacts", { email })
  const sibling_ = await api("POST", "/v1/bulk/contacts", { email: email.toUpperCase() }, sibling.token)
  const theirs = await api("POST", "/v1/bulk/contacts", { email }, other.token)
  for (const c of [mine, sibling_, theirs]) expect(c.status).toBe(201)
  return { mine: mine.json.id as string, sibling: sibling_.json.id as string, theirs: theirs.json.id as string }
}
const statuses = async (ids: { mine: string; sibling: string; theirs: string }) => ({
  mine: (await api("GET", `/v1/bulk/contacts/${ids.mine}`)).json.status,
  sibling: (await api("GET", `/v1/bulk/contacts/${ids.sibling}`, undefined, sibling.token)).json.status,
  theirs: (await api("GET", `/v1/bulk/contacts/${ids.theirs}`, undefined, other.token)).json.status
})
const suppressionsOf = (email: string) =>
  db<{ account_id: string; reason: string; source: string }>(
    "SELECT account_id, reason, source FROM suppressions WHERE lower(email) = $1 ORDER BY account_id", [email.toLowerCase()])
const eventRows = (email: string) =>
  db<{ key_id: string }>("SELECT key_id FROM events WHERE event = 'contact.unsubscribed' AND lower(payload->>'email') = $1 ORDER BY key_id", [email.toLowerCase()])
const hooksFor = (email: string) => hooks.filter((h) => h.event === "contact.unsubscribed" && h.data.email.toLowerCase() === email.toLowerCase())

/** The whole fact, for `email` in the sender's account: asserted once it has happened. */
const expectUnsubscribed = async (email: string, ids: { mine: string; sibling: string; theirs: string }, source: string) => {
  expect(await statuses(ids)).toEqual({ mine: "unsubscribed", sibling: "unsubscribed", theirs: "active" })
  expect(await suppressionsOf(email)).toEqual([{ account_id: sender.accountId, reason: "unsubscribe", source }])
  expect((await eventRows(email)).map((e) => e.key_id)).toEqual([sender.keyId, sibling.keyId].sort())
  const delivered = await eventually(async () => {
    const found = hooksFor(email)
    return found.length >= 2 ? found : undefined
  }, `two contact.unsubscribed webhooks for ${email}`)
  expect(delivered.map((h) => h.keyId).sort()).toEqual([sender.keyId, sibling.keyId].sort())
}
const expectUnchanged = async (email: string, ids: { mine: string; sibling: string; theirs: string }) => {
  expect(await statuses(ids)).toEqual({ mine: "active", sibling: "active", theirs: "active" })
  expect(await suppressionsOf(email)).toEqual([])
  expect(await eventRows(email)).toEqual([])
}

describe("one-click POST (RFC 8058)", () => {
  it("answers 200 with no body and no redirect, and applies the one fact once", async () => {
    const email = "oneclick@rcpt.test"
    const ids = await contactsOf(email)
    const token = tokenFor(email)
    const res = await post(`/u/${token}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("location")).toBeNull()
    expect(await res.text()).toBe("")
    await expectUnsubscribed(email, ids, "one-click")

    // Again, and as multipart: nothing more changes and nothing more is emitted.
    const form = new FormData()
    form.set("List-Unsubscribe", "One-Click")
    expect((await post(`/u/${token}`, form, null)).status).toBe(200)
    expect((await post(`/u/${token}`)).status).toBe(200)
    await new Promise((r) => setTimeout(r, 500))
    expect(await eventRows(email)).toHaveLength(2)
    expect(hooksFor(email)).toHaveLength(2)
    expect(await suppressionsOf(email)).toHaveLength(1)
  })

  it("takes the multipart/form-data body RFC 8058 allows", async () => {
    const email = "multipart@rcpt.test"
    const ids = await contactsOf(email)
    const form = new FormData()
    form.set("List-Unsubscribe", "One-Click")
    const res = await post(`/u/${tokenFor(email)}`, form, null)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe("")
    await expectUnsubscribed(email, ids, "one-click")
  })

  it("changes nothing for a POST that does not ask for it, or one over the form's limit", async () => {
    const email = "notasked@rcpt.test"
    const ids = await contactsOf(email)
    const token = tokenFor(email)
    expect((await post(`/u/${token}`, "List-Unsubscribe=Two-Clicks")).status).toBe(400)
    expect((await post(`/u/${token}`, "{}", "application/json")).status).toBe(400)
    expect((await post(`/u/${token}`, `${ONE_CLICK}&pad=${"x".repeat(8192)}`)).status).toBe(413)
    await expectUnchanged(email, ids)
  })
})

describe("the unsubscribe page", () => {
  it("GET shows one button and changes nothing; the button unsubscribes and says so", async () => {
    const email = "page@rcpt.test"
    const ids = await contactsOf(email)
    const token = tokenFor(email)
    const page = await fetch(`${rig.app.baseUrl}/u/${token}`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    const html = await page.text()
    // The page names who is sending (the account), not only the address (issue 31 item 7).
    expect(html).toMatch(new RegExp(`Stop email from Sender [A-Za-z0-9]+ to ${email.replace(".", "\\.")}\\?`))
    expect(html).not.toMatch(/<script/i)
    expect(html.match(/<form /g)).toHaveLength(1)
    expect(html.match(/<button /g)).toHaveLength(1)
    // A second look (a link scanner) changes nothing either.
    expect((await fetch(`${rig.app.baseUrl}/u/${token}`)).status).toBe(200)
    await new Promise((r) => setTimeout(r, 200))
    await expectUnchanged(email, ids)

    // Press the button as a browser does: the form's method, action and fields.
    const form = /<form method="post" action="([^"]+)">/.exec(html)!
    const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
      .map(([, name, value]) => `${encodeURIComponent(name!)}=${encodeURIComponent(value!)}`).join("&")
    const pressed = await post(form[1]!.replaceAll("&amp;", "&"), fields)
    expect(pressed.status).toBe(200)
    const done = await pressed.text()
    expect(done).toContain("You are unsubscribed")
    expect(done).toMatch(/no more of these emails from Sender [A-Za-z0-9]+\./)
    await expectUnsubscribed(email, ids, "unsubscribe page")
  })

  it("answers a tampered, foreign or cut token with the plain 404 page and changes nothing", async () => {
    const email = "tamper@rcpt.test"
    const ids = await contactsOf(email)
    const good = tokenFor(email)
    const [payload, tag] = good.split(".") as [string, string]
    const forged = `${Buffer.from(JSON.stringify([[sender.accountId, email, ""], 0])).toString("base64url")}.${tag}`
    const flipped = `${payload}.${tag.slice(0, -1)}${tag.endsWith("A") ? "B" : "A"}`
    const confirmToken = tokens.mint("confirm", [sender.accountId, email, ""])
    for (const bad of [forged, flipped, confirmToken, payload, "x".repeat(600), "not-a-token"]) {
      const page = await fetch(`${rig.app.baseUrl}/u/${bad}`)
      expect(page.status).toBe(404)
      expect(await page.text()).toContain("This link is not valid")
      const posted = await post(`/u/${bad}`)
      expect(posted.status).toBe(404)
      expect(posted.headers.get("x-frame-options")).toBe("DENY")
    }
    await new Promise((r) => setTimeout(r, 200))
    await expectUnchanged(email, ids)
  })
})

describe("mailto unsubscribe through the MX listener", () => {
  /** The mailto of the headers the module writes: its address and its subject. */
  const mailtoOf = (email: string) => {
    const headers = unsubscribeHeaders(tokens, { baseUrl: rig.app.baseUrl, bounceDomain: BOUNCE_DOMAIN }, { accountId: sender.accountId, email })
    const mailto = new URL(/<(mailto:[^>]+)>/.exec(headers["List-Unsubscribe"])![1]!)
    return { to: mailto.pathname, subject: mailto.searchParams.get("subject")! }
  }
  const mail = (from: string, to: string, subject: string) =>
    [`From: <${from}>`, `To: <${to}>`, `Subject: ${subject}`, "Message-ID: <u1@rcpt.test>", "", "Please unsubscribe me.", ""].join("\r\n")
  const processed = (to: string, since: Date) =>
    eventually(async () => {
      const rows = await db<{ kind: string; refusal: string | null; state: string }>(
        "SELECT kind, refusal, state FROM inbound_messages WHERE rcpt_to ? $1 AND received_at >= $2 AND state <> 'received'", [to, since])
      return rows.length > 0 ? rows : undefined
    }, `the mail to ${to} processed`)

  it("applies the token of the Subject (a reply's prefix and folding tolerated)", async () => {
    const email = "mailto@rcpt.test"
    const ids = await contactsOf(email)
    const { to, subject } = mailtoOf(email)
    expect(to).toBe(`unsubscribe@${BOUNCE_DOMAIN}`)
    const since = new Date()
    const reply = await sendRaw(rig.app.smtpPort, { from: email, to: [to] }, mail(email, to, `Re:  \r\n [unsubscribe] ${subject}`))
    expect(reply.code).toBe(250)
    const [row] = await processed(to, since)
    expect(row).toEqual({ kind: "unsubscribe", refusal: null, state: "processed" })
    await expectUnsubscribed(email, ids, "mailto")
  })

  it("records a mail whose Subject carries no token that opens, and changes nothing", async () => {
    const email = "mailto-bad@rcpt.test"
    const ids = await contactsOf(email)
    const { to, subject } = mailtoOf(email)
    const [payload, tag] = subject.split(".") as [string, string]
    // Its tag on a payload naming another address of the account.
    const forged = `${Buffer.from(JSON.stringify([[sender.accountId, "someone-else@rcpt.test", ""], 0])).toString("base64url")}.${tag}`
    const since = new Date()
    for (const s of [forged, `${payload}.${tag.slice(1)}A`, "unsubscribe me please", ""]) {
      const reply = await sendRaw(rig.app.smtpPort, { from: email, to: [to] }, mail(email, to, s))
      expect(reply.code).toBe(250)
    }
    const rows = await eventually(async () => {
      const found = await processed(to, since)
      return found.length === 4 ? found : undefined
    }, "four mails processed")
    expect(rows).toHaveLength(4)
    expect(rows.every((r) => r.kind === "unsubscribe" && r.state === "processed" && r.refusal === "no valid unsubscribe token in the subject")).toBe(true)
    await expectUnchanged(email, ids)
  })
})

describe("a feedback loop's opt-out", () => {
  it("is the same fact: suppression unsubscribe, the contacts unsubscribed, contact.unsubscribed", async () => {
    const email = "optout@rcpt.test"
    const ids = await contactsOf(email)
    const before = rig.sink.received.length
    expect((await api("POST", "/v1/mail/send", sendBody(sender, email))).status).toBe(202)
    await rig.sink.waitFor(before + 1)
    const received = rig.sink.received.find((r) => r.rcptTo.includes(email))!
    // Sent to the delivery's VERP address, which names it beyond doubt.
    const report = arf(received.mailFrom, email, headersOf(received.raw)).replace("Feedback-Type: abuse", "Feedback-Type: opt-out")
    expect((await sendRaw(rig.app.smtpPort, { from: "feedback@fbl.isp.test", to: [received.mailFrom] }, report)).code).toBe(250)
    await eventually(async () => (await statuses(ids)).mine === "unsubscribed" || undefined, "contact unsubscribed by the opt-out")
    expect(await statuses(ids)).toEqual({ mine: "unsubscribed", sibling: "unsubscribed", theirs: "active" })
    const [suppression] = await suppressionsOf(email)
    expect(suppression).toMatchObject({ account_id: sender.accountId, reason: "unsubscribe", source: expect.stringMatching(/^opt-out report from /) })
    await eventually(async () => hooksFor(email).length >= 2 || undefined, "two contact.unsubscribed webhooks")
    expect(hooksFor(email).map((h) => h.keyId).sort()).toEqual([sender.keyId, sibling.keyId].sort())
  })
})

describe("DKIM", () => {
  it("signs List-Unsubscribe and List-Unsubscribe-Post, and the signature verifies", async () => {
    const to = "dkim@rcpt.test"
    const headers = unsubscribeHeaders(tokens, { baseUrl: rig.app.baseUrl, bounceDomain: BOUNCE_DOMAIN }, { accountId: sender.accountId, email: to })
    const before = rig.sink.received.length
    expect((await api("POST", "/v1/mail/send", sendBody(sender, to, { headers }))).status).toBe(202)
    await rig.sink.waitFor(before + 1)
    const raw = rig.sink.received.find((r) => r.rcptTo.includes(to))!.raw
    const text = raw.toString("latin1")
    expect(text).toContain("\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n")
    const signature = /^DKIM-Signature:((?:.|\r\n[ \t])*)/m.exec(text)![1]!.replace(/\r\n[ \t]/g, " ")
    const signed = /\bh=([^;]+)/.exec(signature)![1]!.replace(/\s/g, "").toLowerCase().split(":")
    expect(signed).toEqual(expect.arrayContaining(["list-unsubscribe", "list-unsubscribe-post"]))
    const result = await verifyDkimAgainstPublished(rig.app, sender.token, sender.domain, raw)
    expect(result).toMatchObject({ signingDomain: sender.domain, status: { result: "pass" } })
  })
})
