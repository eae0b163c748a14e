/**
 * The sequence step scheduler's pass plan (src/bulk/sequences/pass-plan.ts), as tables: which
 * step is due, when the next one falls due, what a step's message and variables are, how a pass
 * splits into ends, sends and holds, what each key is charged, and whether the next pass follows
 * at once.
 */
import { describe, expect, it } from "vitest"
import {
  chargesByKey,
  type Claimed,
  contactVariables,
  countsAgainstQuota,
  ended,
  failed,
  held,
  HOLD_RECHECK_MS,
  heldUntil,
  holdReasons,
  morePassesDue,
  nextDueAt,
  queued,
  type Sent,
  splitPass,
  stepAfter,
  stepMessage,
  storedStep
} from "../../src/bulk/sequences/pass-plan.ts"
import type { StepRow } from "../../src/bulk/sequences/records.ts"
import type { EffectiveContent } from "../../src/bulk/sequences/step-content.ts"

const step = (id: number, position: number, offset_seconds = 0): StepRow => ({
  sequence_id: "seq", id, position, offset_seconds,
  subject: null, preheader: null, mjml: null, html: null, body_text: null, from_email: null, from_name: null, reply_to: null, template_id: null
})
const sub = (id: string, key_id = "key"): Claimed => ({
  id, sequence_id: "seq", account_id: "acc", key_id, contact_id: `c-${id}`, last_step_id: null, next_due_at: new Date(0)
})
const content = (overrides: Partial<EffectiveContent> = {}): EffectiveContent => ({
  subject: "Hi", html: "", body_text: "", preheader: null, vars: {}, from_email: "news@acme.example", from_name: null, reply_to: null, ...overrides
})

// Positions with gaps (a step removed), ids not in position order (a step inserted later).
const STEPS = [step(7, 1, 0), step(3, 2, 3_600), step(9, 4, 86_400)]

describe("which step is due", () => {
  it.each<[string, ReadonlyArray<StepRow>, number | null, number | undefined]>([
    ["a new subscription's first step is the lowest position", STEPS, null, 7],
    ["after a step, the next by position (not by id)", STEPS, 7, 3],
    ["over a gap in positions", STEPS, 3, 9],
    ["after the last step, none: the subscription ends", STEPS, 9, undefined],
    ["a sequence without steps has none", [], null, undefined],
    ["a last step since removed restarts from the first", STEPS, 42, 7]
  ])("%s", (_name, steps, last, expected) => {
    expect(stepAfter(steps, last)?.id).toBe(expected)
  })

  it.each<[string, StepRow | undefined, Date | null]>([
    ["the next step falls due its offset after this one's due time", step(3, 2, 3_600), new Date(3_600_000 + 1_000)],
    ["a following step with no offset falls due at once", step(3, 2, 0), new Date(1_000)],
    ["no following step: nothing more falls due", undefined, null]
  ])("%s", (_name, following, expected) => {
    expect(nextDueAt(new Date(1_000), following)).toEqual(expected)
  })
})

describe("a step's message", () => {
  it.each<[string, Partial<EffectiveContent>, object]>([
    ["a text-only step has one text part", { body_text: "Hello" }, { content: [{ type: "text/plain", value: "Hello" }] }],
    ["an HTML step without text gets its text from the HTML", { html: "<p>Hello <b>you</b></p>" }, { content: [{ type: "text/plain", value: "Hello you" }, { type: "text/html", value: "<p>Hello <b>you</b></p>" }] }],
    ["the sender's name goes with its address", { body_text: "x", from_name: "Acme" }, { from: { email: "news@acme.example", name: "Acme" } }],
    ["a reply-to is carried", { body_text: "x", reply_to: "help@acme.example" }, { reply_to: { email: "help@acme.example" } }],
    ["no reply-to: none", { body_text: "x" }, { from: { email: "news@acme.example" }, subject: "Hi" }]
  ])("%s", (_name, overrides, expected) => {
    expect(stepMessage(content(overrides), "news@acme.example")).toMatchObject(expected)
  })

  it("a preheader goes into the HTML part", () => {
    const html = stepMessage(content({ html: "<p>Body</p>", preheader: "Sneak peek" }), "news@acme.example").content[1]!.value
    expect(html).toContain("Sneak peek")
    expect(html).toContain("<p>Body</p>")
  })

  it.each<[string, Readonly<Record<string, unknown>>, { name: string | null; metadata: Record<string, unknown> }, Record<string, string>]>([
    ["the contact's email and name", {}, { name: "Ann", metadata: {} }, { email: "ann@x.example", name: "Ann" }],
    ["no name: no name variable", {}, { name: null, metadata: {} }, { email: "ann@x.example" }],
    ["template defaults as text, metadata prefixed", { plan: "free", n: 3 }, { name: null, metadata: { plan: "pro", tags: ["a"] } }, { plan: "free", n: "3", email: "ann@x.example", "metadata.plan": "pro", "metadata.tags": "[\"a\"]" }],
    ["the contact's field wins over a template default", { email: "default@x.example", name: "Friend" }, { name: "Ann", metadata: {} }, { email: "ann@x.example", name: "Ann" }]
  ])("variables: %s", (_name, vars, contact, expected) => {
    expect(contactVariables(vars, { email: "ann@x.example", ...contact })).toEqual(expected)
  })

  it("the stored message names the sequence, step and contact, on the bulk channel", () => {
    const message = stepMessage(content({ body_text: "x" }), "news@acme.example")
    expect(storedStep(sub("s1"), step(3, 2), content(), { email: "ann@x.example", name: "Ann", metadata: {} }, message)).toEqual({
      _tag: "sequence", origin: "sequence", channel: "bulk", sequence_id: "seq", step: 3, contact_id: "c-s1",
      to: { email: "ann@x.example", name: "Ann" }, variables: { email: "ann@x.example", name: "Ann" }, message
    })
  })
})

describe("a pass's outcome", () => {
  type Send = { readonly _tag: "send"; readonly sub: Claimed }
  const send = (s: Claimed): Send => ({ _tag: "send", sub: s })

  it.each<[string, ReadonlyArray<[string, "send" | Sent]>, { ends: Array<string>; sends: Array<string>; holds: Array<[string, string]> }]>([
    ["every step queued", [["a", "send"], ["b", "send"]], { ends: [], sends: ["a", "b"], holds: [] }],
    ["no step left ends the subscription", [["a", ended], ["b", "send"]], { ends: ["a"], sends: ["b"], holds: [] }],
    ["held steps keep their reasons, in order", [["a", held("no_sender")], ["b", held(holdReasons.SendingPaused)]], { ends: [], sends: [], holds: [["a", "no_sender"], ["b", "sending_paused"]] }],
    ["queued outcomes (the one-by-one way) hold nothing", [["a", queued], ["b", held("quota_exhausted")]], { ends: [], sends: [], holds: [["b", "quota_exhausted"]] }]
  ])("%s", (_name, rows, expected) => {
    const split = splitPass(rows.map(([id, plan]) => ({ sub: sub(id), plan: plan === "send" ? send(sub(id)) : plan })))
    expect({
      ends: split.ends.map((s) => s.id),
      sends: split.sends.map((s) => s.sub.id),
      holds: split.holds.map((h) => [h.sub.id, h.reason])
    }).toEqual(expected)
  })

  it.each<[string, ReadonlyArray<[string, string, boolean]>, Record<string, number>]>([
    ["one reservation per key, counting its charged steps", [["a", "k1", true], ["b", "k1", true], ["c", "k2", true]], { k1: 2, k2: 1 }],
    ["simulator recipients are not charged", [["a", "k1", true], ["b", "k1", false]], { k1: 1 }],
    ["a key with nothing charged reserves nothing", [["a", "k1", false]], {}]
  ])("charges: %s", (_name, rows, expected) => {
    const charges = chargesByKey(rows.map(([id, key, charged]) => ({ sub: sub(id, key), limits: key, charged })))
    expect(Object.fromEntries([...charges].map(([key, { count, limits }]) => [key, (expect(limits).toBe(key), count)]))).toEqual(expected)
  })

  it.each<[string, string, boolean]>([
    ["an ordinary address counts against the quota", "ann@x.example", true],
    ["a simulator address does not", "delivered@simulator.herald.invalid", false]
  ])("%s", (_name, email, counts) => {
    expect(countsAgainstQuota({ email, name: null, metadata: {} })).toBe(counts)
  })

  it.each<[string, Sent, Sent]>([
    ["the hold reasons of send-time refusals", held(holdReasons.AccountSuspended), { _tag: "held", reason: "account_suspended" }],
    ["a failure holds the step with its text, cut to 200 characters", failed(new Error("x".repeat(300))), { _tag: "held", reason: `error: Error: ${"x".repeat(300)}`.slice(0, 200) }]
  ])("%s", (_name, sent, expected) => {
    expect(sent).toEqual(expected)
  })

  it.each<[string, number, number, boolean]>([
    ["a pass that claimed its whole batch runs again at once", 200, 200, true],
    ["a short pass waits for the tick", 199, 200, false]
  ])("%s", (_name, claimed, batch, more) => {
    expect(morePassesDue(claimed, batch)).toBe(more)
  })

  it("a held step is looked at again after HOLD_RECHECK_MS", () => {
    expect(heldUntil(new Date(1_000)).getTime()).toBe(1_000 + HOLD_RECHECK_MS)
  })
})
