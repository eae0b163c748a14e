/**
 * What stops a due step, on TestClock (in-process scheduler passes on the appliance's database, MTA
 * off so the queue rows stay to be read): the quota of an account without overage, a suspended or
 * paused account, a sender domain past its verification grace — each holds the step (the
 * subscription stays `active`, with its `hold_reason`) and the step is queued once when the cause
 * clears. Also: the resume rule (next due time = the later of the due time and the moment of
 * resuming, and the following step counts its offset from there), and a step edited after
 * enrolment sent as it is when it falls due.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HOLD_RECHECK_MS } from "../../src/bulk/sequences/StepScheduler.ts"
import { query } from "../support/database.ts"
import { schedulerPassAt } from "../support/sequences.ts"
import { newSender, type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"

let rig: SendingApp

beforeAll(async () => {
  rig = await startSendingApp()
})
afterAll(() => rig.stop())

const api = (sender: Sender, method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
const admin = (method: string, route: string, body?: unknown) => rig.app.request(method, route, body === undefined ? {} : { body })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

/** One scheduler pass with the Clock at `atMs`. */
const passAt = (atMs: number) => schedulerPassAt(rig.app, atMs)

const MINUTE = 60_000

/** A sequence of `sender` with one step a minute after enrolment (then `more` steps), `emails` enrolled. */
const enrolled = async (sender: Sender, emails: ReadonlyArray<string>, more: ReadonlyArray<number> = []) => {
  const seq = await api(sender, "POST", "/v1/bulk/sequences", { name: "Holds", from_email: sender.from })
  expect(seq.status).toBe(201)
  for (const [i, offset] of [60, ...more].entries()) {
    expect((await api(sender, "POST", `/v1/bulk/sequences/${seq.json.id}/steps`, { subject: `Step ${i + 1}`, html: "<p>x</p>", offset_seconds: offset })).status)
      .toBe(201)
  }
  const list = await api(sender, "POST", "/v1/bulk/lists", { name: `L${Math.random()}` })
  await api(sender, "POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails })
  expect((await api(sender, "POST", `/v1/bulk/sequences/${seq.json.id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(emails.length)
  const [row] = await db<{ enrolled_at: Date }>("SELECT min(enrolled_at) AS enrolled_at FROM sequence_subscriptions WHERE sequence_id = $1", [seq.json.id])
  return { id: seq.json.id as string, t0: row!.enrolled_at.getTime() }
}

/** The queued messages of a sequence: (recipient, step, subject), each once per queueing. */
const queued = (sequenceId: string) =>
  db<{ to: string; step: number; subject: string }>(
    `SELECT m.content->'to'->>'email' AS to, (m.content->>'step')::int AS step, m.subject
     FROM messages m WHERE m.content->>'sequence_id' = $1 ORDER BY 1, 2`, [sequenceId])

const subscriptions = async (sender: Sender, id: string) =>
  ((await api(sender, "GET", `/v1/bulk/sequences/${id}/subscriptions`)).json.items as Array<any>)
    .map((s) => ({ email: s.email, state: s.state, hold_reason: s.hold_reason }))
    .sort((a, b) => a.email.localeCompare(b.email))

describe("a due step the account or its sender cannot send now waits, then goes once", () => {
  it("holds at the quota of an account without overage and sends once the quota is raised", async () => {
    // No plan: no overage. One email a month, and two contacts due at once.
    const sender = await newSender(rig.app, rig.dns)
    expect((await admin("PATCH", `/v1/admin/accounts/${sender.accountId}/limits`, { rate_per_min: 1000, monthly_quota: 1 })).status).toBe(200)
    const { id, t0 } = await enrolled(sender, ["q1@example.org", "q2@example.org"])
    await passAt(t0 + MINUTE)
    // Both are due at the same moment: whichever goes first takes the quota, the other waits.
    const first = (await queued(id)).map((m) => m.to)
    expect(first).toHaveLength(1)
    const waiting = first[0] === "q1@example.org" ? "q2@example.org" : "q1@example.org"
    expect(await subscriptions(sender, id)).toEqual([
      { email: first[0], state: "active", hold_reason: null },
      { email: waiting, state: "active", hold_reason: "quota_exhausted" }
    ].sort((a, b) => a.email!.localeCompare(b.email!)))
    const usage = () => db<{ sent: number }>("SELECT sent FROM account_usage WHERE account_id = $1", [sender.accountId])
    expect(await usage()).toEqual([{ sent: 1 }])
    // Still at the limit at the next look: still waiting, nothing recorded for it.
    await passAt(t0 + MINUTE + HOLD_RECHECK_MS)
    expect(await queued(id)).toHaveLength(1)
    expect(await db("SELECT 1 FROM sequence_step_sends x JOIN sequence_subscriptions s ON s.id = x.subscription_id WHERE s.sequence_id = $1", [id]))
      .toHaveLength(1)

    expect((await admin("PATCH", `/v1/admin/accounts/${sender.accountId}/limits`, { rate_per_min: 1000, monthly_quota: 5 })).status).toBe(200)
    await passAt(t0 + MINUTE + 2 * HOLD_RECHECK_MS)
    await passAt(t0 + MINUTE + 3 * HOLD_RECHECK_MS)
    expect((await queued(id)).map((m) => [m.to, m.step])).toEqual([["q1@example.org", 1], ["q2@example.org", 1]])
    expect((await subscriptions(sender, id)).map((s) => s.hold_reason)).toEqual([null, null])
    expect(await usage()).toEqual([{ sent: 2 }])
  })

  it("holds while the account is suspended, and while its sending is paused, then sends once", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { id, t0 } = await enrolled(sender, ["s1@example.org"], [60])
    expect((await admin("POST", `/v1/admin/accounts/${sender.accountId}/suspend`)).status).toBe(200)
    await passAt(t0 + MINUTE)
    expect(await queued(id)).toEqual([])
    expect(await subscriptions(sender, id)).toEqual([{ email: "s1@example.org", state: "active", hold_reason: "account_suspended" }])
    expect((await admin("POST", `/v1/admin/accounts/${sender.accountId}/unsuspend`)).status).toBe(200)
    await passAt(t0 + MINUTE + HOLD_RECHECK_MS)
    expect((await queued(id)).map((m) => m.step)).toEqual([1])

    // The second step falls due while a reputation pause stops the account's sending.
    await db("UPDATE accounts SET sending_paused_at = now(), sending_paused_reason = 'complaint rate 0.50%' WHERE id = $1", [sender.accountId])
    await passAt(t0 + 2 * MINUTE)
    expect(await subscriptions(sender, id)).toEqual([{ email: "s1@example.org", state: "active", hold_reason: "sending_paused" }])
    expect((await admin("POST", `/v1/admin/accounts/${sender.accountId}/unpause`)).status).toBe(200)
    await passAt(t0 + 2 * MINUTE + HOLD_RECHECK_MS)
    await passAt(t0 + 2 * MINUTE + 2 * HOLD_RECHECK_MS)
    expect((await queued(id)).map((m) => m.step)).toEqual([1, 2])
    expect(await subscriptions(sender, id)).toEqual([{ email: "s1@example.org", state: "active", hold_reason: null }])
  })

  it("holds while the sender domain is unverified past its grace, and sends once it is verified again", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { id, t0 } = await enrolled(sender, ["d1@example.org"])
    await db("UPDATE domains SET verification_lost_at = now() - interval '100 hours' WHERE domain = $1", [sender.domain])
    await passAt(t0 + MINUTE)
    expect(await queued(id)).toEqual([])
    expect(await subscriptions(sender, id)).toEqual([{ email: "d1@example.org", state: "active", hold_reason: "domain_unverified" }])
    expect((await api(sender, "POST", `/v1/client/domains/${sender.domain}/verify`)).status).toBe(200)
    await passAt(t0 + MINUTE + HOLD_RECHECK_MS)
    expect((await queued(id)).map((m) => [m.to, m.step])).toEqual([["d1@example.org", 1]])
  })
})

describe("resuming and editing", () => {
  it("makes a resumed subscription due at the later of its due time and the moment of resuming", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { id, t0 } = await enrolled(sender, ["r1@example.org", "r2@example.org"], [3600])
    const [early, late] = (await api(sender, "GET", `/v1/bulk/sequences/${id}/subscriptions`)).json.items.sort((a: any, b: any) => a.email.localeCompare(b.email))
    for (const sub of [early, late]) expect((await api(sender, "POST", `/v1/bulk/sequences/${id}/subscriptions/${sub.id}/pause`)).status).toBe(200)
    // r1's first step fell due an hour ago while it was paused; r2's is still a minute away.
    await db("UPDATE sequence_subscriptions SET next_due_at = next_due_at - interval '61 minutes', last_due_at = last_due_at - interval '61 minutes' WHERE id = $1", [early.id])
    // Held (inactive) while resumed, so that a step appended meanwhile reschedules the subscription before its step goes.
    await api(sender, "PATCH", `/v1/bulk/sequences/${id}`, { status: "inactive" })
    const resumedEarly = await api(sender, "POST", `/v1/bulk/sequences/${id}/subscriptions/${early.id}/resume`)
    expect(resumedEarly.json.state).toBe("active")
    expect(resumedEarly.json.next_due_at).toBe(resumedEarly.json.updated_at)
    const resumedLate = await api(sender, "POST", `/v1/bulk/sequences/${id}/subscriptions/${late.id}/resume`)
    expect(new Date(resumedLate.json.next_due_at).getTime()).toBe(t0 + MINUTE)
    const resumedAt = new Date(resumedEarly.json.updated_at).getTime()
    expect((await api(sender, "POST", `/v1/bulk/sequences/${id}/steps`, { subject: "Step 3", html: "<p>3</p>", offset_seconds: 60 })).status).toBe(201)
    const dueOf = async (subscriptionId: string) =>
      (await db<{ next_due_at: Date; last_step_id: number | null }>("SELECT next_due_at, last_step_id FROM sequence_subscriptions WHERE id = $1", [subscriptionId]))[0]
    expect(await dueOf(early.id)).toEqual({ next_due_at: new Date(resumedAt), last_step_id: null })
    await api(sender, "PATCH", `/v1/bulk/sequences/${id}`, { status: "active" })

    // Sent at the moment of resuming; the next step counts its hour from there, not from the old due time.
    await passAt(resumedAt)
    expect(await dueOf(early.id)).toEqual({ next_due_at: new Date(resumedAt + 3_600_000), last_step_id: 1 })
    expect(await dueOf(late.id)).toEqual({ next_due_at: new Date(t0 + MINUTE), last_step_id: null })
  })

  it("sends a step (and its template) as they are when it falls due, not as they were at enrolment", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { id, t0 } = await enrolled(sender, ["e1@example.org"])
    const template = await api(sender, "POST", "/v1/bulk/templates", { name: "T", subject: "Template before", html: "<p>before</p>" })
    expect(template.status).toBe(201)
    // A second step, a minute after the first, takes everything from the template.
    expect((await api(sender, "POST", `/v1/bulk/sequences/${id}/steps`, { template_id: template.json.id, offset_seconds: 60 })).status).toBe(201)
    const [step] = (await api(sender, "GET", `/v1/bulk/sequences/${id}/steps`)).json
    expect((await api(sender, "PATCH", `/v1/bulk/sequences/${id}/steps/${step.id}`, { subject: "Edited after enrolment", html: "<p>new</p>" })).status)
      .toBe(200)
    expect((await api(sender, "PATCH", `/v1/bulk/templates/${template.json.id}`, { subject: "Template after", html: "<p>after</p>" })).status).toBe(200)
    await passAt(t0 + MINUTE)
    await passAt(t0 + 2 * MINUTE)
    expect((await queued(id)).map((m) => m.subject)).toEqual(["Edited after enrolment", "Template after"])
    const contents = await db<{ step: number; content: any }>(
      `SELECT (m.content->>'step')::int AS step, c.content FROM messages m JOIN message_contents c ON c.id = m.content_id
       WHERE m.content->>'sequence_id' = $1 ORDER BY 1`, [id])
    expect(contents.map((r) => r.content.content.find((part: any) => part.type === "text/html").value)).toEqual(["<p>new</p>", "<p>after</p>"])
  })
})
