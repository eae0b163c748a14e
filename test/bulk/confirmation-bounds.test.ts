/**
 * Issue 26, finding 5: confirmation mail is mail that others trigger, and it was a mail bomb —
 * deleting a member and adding the address again mailed it again (ten mails to one address in a
 * second), from an account whose rate window was spent, with a subject and intro the account chose.
 * Against a running appliance with a real SMTP sink:
 * - delete-then-re-add ten times → one mail at the sink; the re-adds stay pending, counted in
 *   `confirmations_withheld` (members call and import); other accounts stay fine meanwhile;
 * - a call that may queue confirmation mail counts once in the rate windows: spent → 429
 *   `rate_limit_exceeded` and nothing changed (no contact, no member, no mail);
 * - an explicit resend inside 24 h → 429 `confirmation_recently_sent` with `Retry-After`; after
 *   24 h (TestClock, the appliance's services on its database) a new confirmation goes;
 * - the mail names the account, the list and the date of the request;
 * - the page's "I did not ask for this": GET changes nothing, POST suppresses the address for the
 *   account with source `not-me` and unsubscribes every contact of it.
 */
import { Effect, TestClock, TestContext } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Lists } from "../../src/bulk/lists/Lists.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { expectResponsive, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody, siblingKey } from "../support/sending.ts"
import { sleep } from "../support/net.ts"

const DAY_MS = 24 * 60 * 60 * 1000
const SIMULATOR = "delivered@simulator.herald.invalid"

let rig: DeliveryRig
let sender: Sender
let bystander: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  bystander = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("bomb.example")
}, 60_000)
afterAll(async () => {
  await rig?.stop()
})

const call = (who: { readonly token: string }, method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: who.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

const optInList = async (who: Sender, name: string, settings: Record<string, unknown> = {}) => {
  const created = await call(who, "POST", "/v1/bulk/lists", { name })
  expect(created.status).toBe(201)
  const on = await call(who, "PUT", `/v1/bulk/lists/${created.json.id}/confirmation`, {
    require_confirmation: true,
    confirm_from_email: `news@${who.domain}`,
    ...settings
  })
  expect(on.status).toBe(200)
  return created.json.id as string
}

/** The confirmation messages queued to `email`. */
const confirmationsTo = (email: string) =>
  db<{ id: string }>(
    "SELECT m.id FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.origin = 'confirmation' AND lower(d.recipient) = lower($1)",
    [email]
  )
const atSink = (email: string) => rig.sink.received.filter((m) => m.rcptTo.some((r) => r.toLowerCase() === email))
const waitAtSink = async (email: string, count: number) => {
  const end = Date.now() + 30_000
  while (atSink(email).length < count) {
    if (Date.now() > end) throw new Error(`${atSink(email).length} of ${count} mails for ${email} at the sink`)
    await sleep(50)
  }
}
const accountName = async (who: Sender) => (await db<{ name: string }>("SELECT name FROM accounts WHERE id = $1", [who.accountId]))[0]!.name

/**
 * While `attack` runs, the appliance stays fine for the others (issue 26 "Done when", the rule in
 * `expectResponsive`): `/health` asked back to back, the bystander account sending after each
 * answer. Answers the attack's result.
 */
const othersStayFine = async <A>(attack: () => Promise<A>): Promise<A> => {
  const { result, health } = await probeHealthWhile(rig.app, attack, { intervalMs: 0, bystander: { sender: bystander, to: SIMULATOR, each: true } })
  console.log(`while the attack ran: ${formatHealth(health)}`)
  expectResponsive(health)
  return result
}

describe("finding 5: the confirmation mail bomb", () => {
  it("mails an address once however often it is deleted and added again; the re-adds stay pending and are counted", async () => {
    const listId = await optInList(sender, "Daily Deals", { confirm_subject: "URGENT: your account", confirm_intro: "Anything the account wants." })
    const victim = "victim@bomb.example"
    const answers = await othersStayFine(async () => {
      const seen: Array<{ queued: number; withheld: number }> = []
      for (let round = 0; round < 10; round++) {
        const added = await call(sender, "POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [victim] })
        expect(added.status).toBe(200)
        expect(added.json).toMatchObject({ contact_count: 1, pending_count: 1 })
        seen.push({ queued: added.json.confirmations_queued, withheld: added.json.confirmations_withheld })
        expect((await call(sender, "DELETE", `/v1/bulk/lists/${listId}/contacts/${encodeURIComponent(victim)}`)).status).toBe(200)
      }
      return seen
    })
    // The import's way in, and deleting the contact itself, change nothing either.
    const contactId = (await call(sender, "GET", `/v1/bulk/contacts/${encodeURIComponent(victim)}`)).json.id as string
    expect((await call(sender, "DELETE", `/v1/bulk/contacts/${contactId}`)).status).toBe(200)
    const imported = await call(sender, "POST", "/v1/bulk/contacts/import", { contacts: [{ email: victim }], list_ids: [listId] })
    expect(imported.status).toBe(200)

    // Eleven additions, one mail (it was eleven), and the address is a pending member.
    expect(await confirmationsTo(victim)).toHaveLength(1)
    await waitAtSink(victim, 1)
    await sleep(1500)
    expect(atSink(victim)).toHaveLength(1)
    const listed = await call(sender, "GET", `/v1/bulk/lists/${listId}/contacts?status=pending`)
    expect(listed.json.items.map((c: { email: string }) => c.email)).toEqual([victim])
    // Each answer says what became of its confirmation.
    expect(answers).toEqual([{ queued: 1, withheld: 0 }, ...Array.from({ length: 9 }, () => ({ queued: 0, withheld: 1 }))])
    expect(imported.json).toMatchObject({ created: 1, confirmations_queued: 0, confirmations_withheld: 1 })
  })

  it("names the account, the list and the date of the request, whatever the account wrote", async () => {
    const listId = await optInList(sender, "Weekly <Offers>", { confirm_subject: "Your bank needs you", confirm_intro: "Press the button at once." })
    const before = Date.now()
    expect((await call(sender, "POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["named@bomb.example"] })).status).toBe(200)
    await waitAtSink("named@bomb.example", 1)
    const mail = await simpleParser(atSink("named@bomb.example")[0]!.raw)
    const name = await accountName(sender)
    const dates = [before, Date.now()].map((ms) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`)
    const line = (date: string) => `This request was made on ${date} through ${name} for the list "Weekly <Offers>".`
    expect(dates.some((date) => (mail.text ?? "").includes(line(date))), mail.text).toBe(true)
    expect(mail.text).toContain(`you will get no more mail from ${name}`)
    expect(mail.html).toContain(name)
    // Escaped in the html part: the list's name is the account's text.
    expect(mail.html).toContain("for the list \"Weekly &lt;Offers&gt;\".")
  })
})

describe("the rate windows", () => {
  it("count a call that may queue confirmation mail once; spent, the call is refused with 429 and nothing changes", async () => {
    const spent = await newSender(rig.app, rig.dns)
    expect((await rig.app.request("PATCH", `/v1/admin/accounts/${spent.accountId}/limits`, { body: { rate_per_min: 3 } })).status).toBe(200)
    const listId = await optInList(spent, "Spent")
    const open = (await call(spent, "POST", "/v1/bulk/lists", { name: "Open" })).json.id as string

    // Five mails, one place in the window.
    const five = ["w1", "w2", "w3", "w4", "w5"].map((n) => `${n}@bomb.example`)
    const added = await call(spent, "POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: five })
    expect(added.status).toBe(200)
    expect(await Promise.all(five.map(async (email) => (await confirmationsTo(email)).length))).toEqual([1, 1, 1, 1, 1])
    expect((await call(spent, "POST", "/v1/mail/send", sendBody(spent, SIMULATOR))).status).toBe(202)
    expect((await call(spent, "POST", "/v1/mail/send", sendBody(spent, SIMULATOR))).status).toBe(202)

    // Spent: the members call and the import that would mail are refused, and nothing is written.
    const refused = [
      await call(spent, "POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["late@bomb.example"] }),
      await call(spent, "POST", "/v1/bulk/contacts/import", { contacts: [{ email: "late2@bomb.example" }], list_ids: [listId] })
    ]
    for (const res of refused) {
      expect(res.status).toBe(429)
      expect(res.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
      expect(res.headers.get("ratelimit-remaining")).toBe("0")
    }
    for (const email of ["late@bomb.example", "late2@bomb.example"]) {
      expect((await call(spent, "GET", `/v1/bulk/contacts/${encodeURIComponent(email)}`)).status).toBe(404)
      expect(await confirmationsTo(email)).toEqual([])
    }
    expect((await call(spent, "GET", `/v1/bulk/lists/${listId}`)).json).toMatchObject({ contact_count: 5, pending_count: 5 })
    // The five mails took one place in the window, and the answer counted them.
    expect(added.headers.get("ratelimit-remaining")).toBe("2")
    expect(added.json).toMatchObject({ confirmations_queued: 5, confirmations_withheld: 0 })

    // Calls that cannot mail are CRUD: never limited.
    expect((await call(spent, "POST", `/v1/bulk/lists/${open}/contacts`, { contacts: ["plain@bomb.example"] })).status).toBe(200)
    const consented = await call(spent, "POST", "/v1/bulk/contacts/import", { contacts: [{ email: "given@bomb.example" }], list_ids: [listId], confirmed: true })
    expect(consented.status).toBe(200)
    expect(await confirmationsTo("given@bomb.example")).toEqual([])
  })
})

describe("the explicit resend and the 24 hours", () => {
  it("refuses a resend inside 24 h with 429 confirmation_recently_sent and Retry-After; after them a new confirmation goes", async () => {
    const owner = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const listId = await optInList(owner, "Resent")
    const email = "again@bomb.example"
    expect((await call(owner, "POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [email] })).status).toBe(200)
    const addedAt = Date.now()

    const resent = await call(owner, "POST", `/v1/bulk/lists/${listId}/contacts/${encodeURIComponent(email)}/resend`)
    expect(resent.status).toBe(429)
    expect(resent.json.error).toMatchObject({ type: "rate_limit_error", code: "confirmation_recently_sent" })
    const retryAfter = Number(resent.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(DAY_MS / 1000 - 120)
    expect(retryAfter).toBeLessThanOrEqual(DAY_MS / 1000)
    expect(await confirmationsTo(email)).toHaveLength(1)

    // Not pending: 409. A list that does not require confirmation has no pending members.
    const open = (await call(owner, "POST", "/v1/bulk/lists", { name: "Open" })).json.id as string
    expect((await call(owner, "POST", `/v1/bulk/lists/${open}/contacts`, { contacts: [email] })).status).toBe(200)
    expect((await call(owner, "POST", `/v1/bulk/lists/${open}/contacts/${encodeURIComponent(email)}/resend`)).status).toBe(409)
    expect((await call(owner, "POST", `/v1/bulk/lists/${listId}/contacts/nobody%40bomb.example/resend`)).status).toBe(404)

    // The appliance's own services on its database, with the Clock a day on.
    const me = { accountId: owner.accountId, keyId: owner.keyId }
    const at = (ms: number) => TestClock.setTime(addedAt + ms)
    const later = await withServices(rig.app, Effect.gen(function*() {
      const lists = yield* Lists
      yield* at(DAY_MS - 60_000)
      const early = yield* Effect.either(lists.resendConfirmation(me, listId, email))
      yield* at(DAY_MS + 60_000)
      const resend = yield* lists.resendConfirmation(me, listId, email)
      // Delete and re-add a minute after that resend: held back; a day after it: mailed.
      yield* at(DAY_MS + 120_000)
      yield* lists.removeMember(me, listId, email)
      const readded = yield* lists.addMembers(me, listId, [email])
      yield* at(2 * DAY_MS + 120_000)
      yield* lists.removeMember(me, listId, email)
      const nextDay = yield* lists.addMembers(me, listId, [email])
      return { early, resend, readded, nextDay }
    }).pipe(Effect.provide(TestContext.TestContext)))
    expect(later.early._tag === "Left" ? later.early.left._tag : "Right").toBe("ConfirmationRecentlySent")
    expect(later.resend).toMatchObject({ list_id: listId, email, confirmation_sent_at: new Date(addedAt + DAY_MS + 60_000).toISOString() })
    expect(later.readded).toMatchObject({ confirmations_queued: 0, confirmations_withheld: 1, pending_count: 1 })
    expect(later.nextDay).toMatchObject({ confirmations_queued: 1, confirmations_withheld: 0 })
    expect(await confirmationsTo(email)).toHaveLength(3)
  })
})

describe("the page's \"I did not ask for this\"", () => {
  const page = (method: "GET" | "POST", path: string, body = "") =>
    rig.app.request(method, path, { token: null, ...(method === "POST" ? { rawBody: body, headers: { "content-type": "application/x-www-form-urlencoded" } } : {}) })

  it("shows both buttons on GET and changes nothing; its POST unsubscribes the address from all the account's mail (source not-me)", async () => {
    const listId = await optInList(sender, "Not Mine")
    const email = "stranger@bomb.example"
    // Another key of the account holds a contact of the same address: it changes too.
    const sibling = await siblingKey(rig.app, sender)
    expect((await call(sibling, "POST", "/v1/bulk/contacts", { email })).status).toBe(201)
    expect((await call(sender, "POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [email] })).status).toBe(200)
    await waitAtSink(email, 1)
    const mail = await simpleParser(atSink(email)[0]!.raw)
    const path = /\/confirm\/[A-Za-z0-9_.-]+/.exec(mail.text ?? "")![0]

    const shown = await page("GET", path)
    expect(shown.status).toBe(200)
    expect(shown.text.match(/<button/g)).toHaveLength(2)
    expect(shown.text).toContain("I did not ask for this")
    expect(shown.text).toContain(await accountName(sender))
    expect(shown.text).toContain(`name="choice" value="not-me"`)
    const suppression = () => db<{ reason: string; source: string }>("SELECT reason, source FROM suppressions WHERE account_id = $1 AND email = $2", [sender.accountId, email])
    const statuses = async () => (await db<{ status: string }>("SELECT status FROM contacts WHERE account_id = $1 AND lower(email) = $2", [sender.accountId, email])).map((c) => c.status)
    const unsubscribedEvents = () => db<{ key_id: string }>("SELECT key_id FROM events WHERE event = 'contact.unsubscribed' AND payload->>'email' = $1", [email])
    expect(await suppression()).toEqual([])
    expect(await statuses()).toEqual(["active", "active"])

    const refused = await page("POST", path, "choice=not-me")
    expect(refused.status).toBe(200)
    expect(refused.text).toContain("no more mail")
    expect(await suppression()).toEqual([{ reason: "unsubscribe", source: "not-me" }])
    expect(await statuses()).toEqual(["unsubscribed", "unsubscribed"])
    expect((await unsubscribedEvents()).map((e) => e.key_id).sort()).toEqual([sender.keyId, sibling.keyId].sort())
    // Not a confirmation: the membership is still pending, nothing confirmed.
    expect((await db("SELECT 1 FROM events WHERE event = 'contact.confirmed' AND payload->>'list_id' = $1", [listId]))).toEqual([])
    expect((await db<{ status: string }>("SELECT m.status FROM list_memberships m JOIN contacts c ON c.id = m.contact_id WHERE m.list_id = $1", [listId]))).toEqual([{ status: "pending" }])

    // Again: the same page, nothing more emitted.
    expect((await page("POST", path, "choice=not-me")).status).toBe(200)
    expect(await unsubscribedEvents()).toHaveLength(2)
  })
})
