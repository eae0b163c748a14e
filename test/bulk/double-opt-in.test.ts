/**
 * Double opt-in end to end against a running appliance with a real SMTP sink and a real webhook
 * receiver: a contact added to a list that requires confirmation gets one confirmation mail (from,
 * subject, intro rendered with its fields, a link to /confirm/<token>); a GET of the link shows a
 * page with its buttons and confirms nothing; the button's POST confirms and `contact.confirmed`
 * reaches the webhook once, however often it is pressed. Tampered, expired, foreign-purpose and
 * orphaned tokens get the 404 page and change nothing; a suppressed address gets no mail and stays
 * pending; the mail counts against the quota; the import with list_ids mails each new pending
 * member (none with confirmed: true); re-adding a pending member mails nothing again; the send's
 * refusals (sender domain, quota) refuse the whole call and add nothing.
 */
import { Schema } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { receiverBody } from "../../src/events/schema.ts"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { hookWebhooks, newSender, type Sender } from "../support/sending.ts"
import { type Receiver, startReceiver } from "../webhooks/receiver.ts"
import { sleep } from "../support/net.ts"

let rig: DeliveryRig
let sender: Sender
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver()
  rig = await startDeliveryRig({ HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("optin.example")
  await hookWebhooks(rig.app, sender, receiver.url())
}, 60_000)
afterAll(async () => {
  await rig?.stop()
  await receiver?.close()
})

const api = (method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
const page = (method: "GET" | "POST", path: string) =>
  rig.app.request(method, path, { token: null, ...(method === "POST" ? { rawBody: "", headers: { "content-type": "application/x-www-form-urlencoded" } } : {}) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

/** A list of the sender's key requiring confirmation. */
const optInList = async (name: string, settings: Record<string, unknown> = {}) => {
  const created = await api("POST", "/v1/bulk/lists", { name })
  expect(created.status).toBe(201)
  const on = await api("PUT", `/v1/bulk/lists/${created.json.id}/confirmation`, {
    require_confirmation: true,
    confirm_from_email: `news@${sender.domain}`,
    ...settings
  })
  expect(on.status).toBe(200)
  return created.json.id as string
}

const membership = async (listId: string, email: string) => {
  const contact = await api("GET", `/v1/bulk/contacts/${encodeURIComponent(email)}`)
  return (contact.json.lists as Array<{ list_id: string; status: string }>).find((l) => l.list_id === listId)?.status
}

/** The confirmation messages queued to `email`. */
const confirmationsTo = (email: string) =>
  db<{ id: string; channel: string }>(
    "SELECT m.id, m.channel FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.origin = 'confirmation' AND lower(d.recipient) = lower($1)",
    [email]
  )
const usage = async () => (await db<{ sent: number }>("SELECT sent FROM key_usage WHERE key_id = $1", [sender.keyId]))[0]?.sent ?? 0
const confirmedEvents = (listId: string) =>
  db<{ payload: Record<string, unknown> }>("SELECT payload FROM events WHERE event = 'contact.confirmed' AND payload->>'list_id' = $1", [listId])

const expectPublicHeaders = (headers: Headers) => {
  expect(headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
  expect(headers.get("x-frame-options")).toBe("DENY")
  expect(headers.get("content-type")).toMatch(/^text\/html/)
}

/** Mints a token with the appliance's own secret (read from its database). */
const mintWithSecret = async (purpose: "confirm" | "unsubscribe", fields: ReadonlyArray<string>, expiresAtMs?: number) => {
  const [row] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
  return makeTokens(row!.value).mint(purpose, fields, expiresAtMs)
}

/** The mail the sink received for `email`, parsed (waits for it). */
const mailTo = async (email: string) => {
  const end = Date.now() + 30_000
  for (;;) {
    const found = rig.sink.received.find((m) => m.rcptTo.some((r) => r.toLowerCase() === email))
    if (found !== undefined) return simpleParser(found.raw)
    if (Date.now() > end) throw new Error(`no mail for ${email} at the sink`)
    await sleep(50)
  }
}

/** Adds `email` to `listId` and answers the path of the link in its confirmation mail, as delivered. */
const confirmationLink = async (listId: string, email: string) => {
  expect((await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [email] })).status).toBe(200)
  const link = /\/confirm\/[A-Za-z0-9_.-]+/.exec((await mailTo(email)).text ?? "")
  expect(link).not.toBeNull()
  return link![0]
}

describe("the confirmation mail and the page", () => {
  it("mails the rendered confirmation, shows a page on GET without confirming, confirms once on the button's POST", async () => {
    const listId = await optInList("Weekly News", {
      confirm_from_name: "News Team",
      confirm_subject: "{{ name }}, confirm {{ list_name }}",
      confirm_intro: "Hello {{ name }} <on {{ metadata.plan }}>, one click and you are in."
    })
    expect((await api("POST", "/v1/bulk/contacts", { email: "ada@optin.example", name: "Ada", metadata: { plan: "pro" } })).status).toBe(201)
    const usedBefore = await usage()

    const added = await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["ada@optin.example"] })
    expect(added.status).toBe(200)
    expect(added.json).toMatchObject({ contact_count: 1, pending_count: 1, sendable_count: 0 })
    // Queued with the answer, on the bulk channel, and counted against the quota.
    expect(await confirmationsTo("ada@optin.example")).toEqual([{ id: expect.stringMatching(/^msg_/), channel: "bulk" }])
    expect(await usage()).toBe(usedBefore + 1)

    const mail = await mailTo("ada@optin.example")
    expect(mail.from?.value[0]).toMatchObject({ address: `news@${sender.domain}`, name: "News Team" })
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.value[0]?.address : undefined).toBe("ada@optin.example")
    expect(mail.subject).toBe("Ada, confirm Weekly News")
    expect(mail.headers.get("x-herald-channel")).toBe("bulk")
    expect(mail.text).toContain("Hello Ada <on pro>, one click and you are in.")
    // The intro is text: escaped in the html part, not markup.
    expect(mail.html).toContain("Hello Ada &lt;on pro&gt;, one click and you are in.")
    const link = /(\S+)\/confirm\/([A-Za-z0-9_.-]+)/.exec(mail.text ?? "")
    expect(link).not.toBeNull()
    expect(mail.html).toContain(`href="${link![0]}"`)
    const path = `/confirm/${link![2]}`

    // GET: the page with its two buttons (confirm; "I did not ask for this") posting to the same path; nothing confirmed.
    const shown = await page("GET", path)
    expect(shown.status).toBe(200)
    expectPublicHeaders(shown.headers)
    expect(shown.text).toContain("Weekly News")
    expect(shown.text).toContain(`<form method="post" action="${path}">`)
    expect(shown.text.match(/<button/g)).toHaveLength(2)
    expect(shown.text).not.toContain("<script")
    expect(await page("GET", path)).toMatchObject({ status: 200 })
    expect(await membership(listId, "ada@optin.example")).toBe("pending")
    expect(await confirmedEvents(listId)).toEqual([])

    // The button's POST confirms and emits contact.confirmed to the list's key.
    const pressed = await page("POST", path)
    expect(pressed.status).toBe(200)
    expectPublicHeaders(pressed.headers)
    expect(pressed.text).toContain("confirmed")
    expect(await membership(listId, "ada@optin.example")).toBe("confirmed")
    expect((await api("GET", `/v1/bulk/lists/${listId}`)).json).toMatchObject({ pending_count: 0, sendable_count: 1 })
    const [hit] = await receiver.waitFor(1, (h) => h.json?.event === "contact.confirmed" && h.json.list_id === listId)
    expect(hit!.json).toMatchObject({ event: "contact.confirmed", app: sender.keyId, email: "ada@optin.example", list_id: listId, list_name: "Weekly News" })
    expect(Schema.decodeUnknownEither(receiverBody("contact.confirmed"))(hit!.json, { onExcessProperty: "error" })._tag).toBe("Right")

    // More presses, some at once: the same page, nothing changed, nothing emitted.
    const again = await Promise.all([1, 2, 3, 4].map(() => page("POST", path)))
    for (const res of again) {
      expect(res.status).toBe(200)
      expect(res.text).toBe(pressed.text)
    }
    expect((await page("GET", path)).text).toContain("confirmed")
    expect(await confirmedEvents(listId)).toHaveLength(1)
    await sleep(1500)
    expect(receiver.hits.filter((h) => h.json?.event === "contact.confirmed" && h.json.list_id === listId)).toHaveLength(1)
    // No delivery event for confirmation mail.
    const [message] = await confirmationsTo("ada@optin.example")
    expect(await db("SELECT event FROM events WHERE payload->>'message_id' = $1", [message!.id])).toEqual([])
  })

  it("answers the 404 page to a tampered, expired, foreign-purpose or orphaned token and changes nothing", async () => {
    const listId = await optInList("Guarded")
    const path = await confirmationLink(listId, "bob@optin.example")
    const token = path.slice("/confirm/".length)
    const contactId = (await api("GET", `/v1/bulk/contacts/${encodeURIComponent("bob@optin.example")}`)).json.id as string
    const [payload, mac] = token.split(".") as [string, string]
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1)
    const bad = [
      `/confirm/${flip(payload, 3)}.${mac}`,
      `/confirm/${payload}.${flip(mac, 5)}`,
      `/confirm/${token}x`,
      "/confirm/not-a-token",
      `/confirm/${await mintWithSecret("confirm", [listId, contactId], Date.now() - 1000)}`,
      `/confirm/${await mintWithSecret("unsubscribe", [listId, contactId])}`,
      `/confirm/${makeTokens("another secret").mint("confirm", [listId, contactId], Date.now() + 60_000)}`
    ]
    for (const target of bad) {
      for (const method of ["GET", "POST"] as const) {
        const res = await page(method, target)
        expect(res.status, `${method} ${target}`).toBe(404)
        expectPublicHeaders(res.headers)
        expect(res.text).toContain("This link is not valid")
      }
    }
    expect(await membership(listId, "bob@optin.example")).toBe("pending")
    expect(await confirmedEvents(listId)).toEqual([])

    // A valid token whose membership is gone: 404, nothing recreated.
    expect((await api("DELETE", `/v1/bulk/lists/${listId}/contacts/${contactId}`)).status).toBe(200)
    expect((await page("GET", path)).status).toBe(404)
    expect((await page("POST", path)).status).toBe(404)
    expect(await db("SELECT 1 FROM list_memberships WHERE list_id = $1", [listId])).toEqual([])
    expect(await confirmedEvents(listId)).toEqual([])
  })
})

describe("who gets the mail", () => {
  it("sends nothing to a suppressed address (it stays pending) and nothing again to a re-added pending member", async () => {
    const listId = await optInList("Careful")
    expect((await api("POST", "/v1/client/suppressions", { email: "held@optin.example", reason: "manual" })).status).toBeLessThan(300)
    const usedBefore = await usage()
    const added = await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["held@optin.example", "carol@optin.example"] })
    expect(added.status).toBe(200)
    expect(added.json).toMatchObject({ contact_count: 2, pending_count: 2 })
    expect(await confirmationsTo("held@optin.example")).toEqual([])
    expect(await confirmationsTo("carol@optin.example")).toHaveLength(1)
    expect(await usage()).toBe(usedBefore + 1)
    expect(await membership(listId, "held@optin.example")).toBe("pending")

    // Re-adding: the memberships exist already, so no second mail and no second charge.
    expect((await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["carol@optin.example", "held@optin.example"] })).status).toBe(200)
    expect(await confirmationsTo("carol@optin.example")).toHaveLength(1)
    expect(await usage()).toBe(usedBefore + 1)
    await sleep(1000)
    expect(rig.sink.received.filter((m) => m.rcptTo.includes("held@optin.example"))).toEqual([])
  })

  it("mails each new pending member of an import with list_ids, and none with confirmed: true", async () => {
    const optIn = await optInList("Imported")
    const open = (await api("POST", "/v1/bulk/lists", { name: "Open" })).json.id as string
    const usedBefore = await usage()
    const emails = ["i1@optin.example", "i2@optin.example", "i3@optin.example"]
    const imported = await api("POST", "/v1/bulk/contacts/import", {
      contacts: emails.map((email, i) => ({ email, name: `Imp ${i}` })),
      list_ids: [optIn, open]
    })
    expect(imported.status).toBe(200)
    expect(imported.json).toMatchObject({ created: 3 })
    for (const email of emails) expect(await confirmationsTo(email), email).toHaveLength(1)
    expect(await usage()).toBe(usedBefore + 3)
    expect((await api("GET", `/v1/bulk/lists/${optIn}`)).json).toMatchObject({ contact_count: 3, pending_count: 3 })

    // An import of the same addresses again mails nothing (already pending).
    expect((await api("POST", "/v1/bulk/contacts/import", { contacts: emails.map((email) => ({ email })), list_ids: [optIn] })).status).toBe(200)
    for (const email of emails) expect(await confirmationsTo(email), email).toHaveLength(1)

    // With the operator's consent: confirmed at once, no mail.
    const consented = ["c1@optin.example", "c2@optin.example"]
    const held = await api("POST", "/v1/bulk/contacts/import", { contacts: consented.map((email) => ({ email })), list_ids: [optIn], confirmed: true })
    expect(held.status).toBe(200)
    for (const email of consented) {
      expect(await confirmationsTo(email)).toEqual([])
      expect(await membership(optIn, email)).toBe("confirmed")
    }
    expect(await usage()).toBe(usedBefore + 3)

    // The CSV form with list_ids as a query parameter mails as well.
    const csv = await rig.app.request("POST", `/v1/bulk/contacts/import?list_ids=${optIn}`, {
      token: sender.token,
      rawBody: "email,name\ncsv1@optin.example,Csv One\n",
      headers: { "content-type": "text/csv" }
    })
    expect(csv.status).toBe(200)
    expect(await confirmationsTo("csv1@optin.example")).toHaveLength(1)

    // Each arrives, rendered for its contact, with its own link.
    const mails = await Promise.all(emails.map(mailTo))
    expect(mails.map((m) => m.subject)).toEqual(emails.map(() => "Please confirm your subscription to Imported"))
    expect(new Set(mails.map((m) => /\/confirm\/\S+/.exec(m.text ?? "")?.[0])).size).toBe(3)
  })

  it("refuses the whole call as the send does when the sender's domain may not send, adding nothing", async () => {
    const listId = await optInList("Unsendable")
    await db("UPDATE domains SET verified_at = NULL WHERE domain = $1", [sender.domain])
    try {
      const refused = await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["dan@optin.example"] })
      expect(refused.status).toBe(403)
      expect(refused.json.error.code).toBe("domain_not_verified")
      const imported = await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "eve@optin.example" }], list_ids: [listId] })
      expect(imported.status).toBe(403)
      expect((await api("GET", `/v1/bulk/lists/${listId}`)).json).toMatchObject({ contact_count: 0 })
      expect((await api("GET", `/v1/bulk/contacts/${encodeURIComponent("eve@optin.example")}`)).status).toBe(404)
      expect(await confirmationsTo("dan@optin.example")).toEqual([])
      // With the operator's consent there is no mail to refuse.
      const consented = await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "eve@optin.example" }], list_ids: [listId], confirmed: true })
      expect(consented.status).toBe(200)
    } finally {
      await db("UPDATE domains SET verified_at = now() WHERE domain = $1", [sender.domain])
    }
  })

  it("refuses the whole call with 429 when the monthly quota is used up (no overage), adding nothing", async () => {
    const spent = await newSender(rig.app, rig.dns)
    await db("UPDATE accounts SET monthly_quota_override = 0 WHERE id = $1", [spent.accountId])
    const call = (method: string, route: string, body: unknown) => rig.app.request(method, route, { token: spent.token, body })
    const listId = (await call("POST", "/v1/bulk/lists", { name: "Spent" })).json.id as string
    expect((await call("PUT", `/v1/bulk/lists/${listId}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${spent.domain}` })).status).toBe(200)
    const refused = await call("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["fay@optin.example"] })
    expect(refused.status).toBe(429)
    expect(refused.json.error.code).toBe("monthly_quota_exceeded")
    expect((await rig.app.request("GET", `/v1/bulk/lists/${listId}`, { token: spent.token })).json).toMatchObject({ contact_count: 0 })
    expect(await db("SELECT sent FROM key_usage WHERE key_id = $1 AND sent > 0", [spent.keyId])).toEqual([])
    expect(await confirmationsTo("fay@optin.example")).toEqual([])
  })

  it("refuses a subject or intro that does not compile, naming the field", async () => {
    const created = await api("POST", "/v1/bulk/lists", { name: "Broken" })
    const res = await api("PUT", `/v1/bulk/lists/${created.json.id}/confirmation`, {
      require_confirmation: true,
      confirm_from_email: `news@${sender.domain}`,
      confirm_intro: "Hi {{ name | shell }}"
    })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "render_failed", param: "confirm_intro" })
    expect((await api("GET", `/v1/bulk/lists/${created.json.id}`)).json.require_confirmation).toBe(0)
  })
})
