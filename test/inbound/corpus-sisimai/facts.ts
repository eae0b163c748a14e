/**
 * The facts expected.json states about one file (SOURCES.md), each checked against what
 * `understandMessage` made of it and named so a miss can be listed by name.
 */
import type { Understood } from "../../../src/inbound/parse/types.ts"

export interface ExpectedRecipient {
  readonly address: string
  readonly status?: string
  readonly class?: string
}

export interface Expected {
  readonly kind: "bounce" | "not-a-bounce" | "complaint"
  readonly class?: "hard" | "soft" | "mixed"
  readonly feedback_type?: string
  readonly recipients: ReadonlyArray<ExpectedRecipient>
}

export interface Fact {
  readonly fact: string
  readonly ok: boolean
}

const complaintFacts = (want: Expected, got: Understood): ReadonlyArray<Fact> => {
  const complaint = got.kind === "complaint" ? got.complaint : null
  const facts: Array<Fact> = [{ fact: "is a complaint", ok: complaint !== null }]
  if (want.feedback_type !== undefined) facts.push({ fact: `feedback type ${want.feedback_type}`, ok: complaint?.feedback_type === want.feedback_type })
  for (const r of want.recipients) facts.push({ fact: `${r.address} complained`, ok: complaint?.recipients.includes(r.address) === true })
  return facts
}

const bounceFacts = (want: Expected, got: Understood): ReadonlyArray<Fact> => {
  const recipients = got.kind === "bounce" ? got.bounce.recipients : []
  const facts: Array<Fact> = [
    { fact: "is a bounce", ok: got.kind === "bounce" },
    { fact: `names ${want.recipients.length} recipient(s)`, ok: recipients.length === want.recipients.length }
  ]
  if (want.class !== undefined) {
    const classes = new Set(recipients.map((r) => r.class))
    const ok = want.class === "mixed" ? classes.has("hard") && classes.has("soft") : classes.size === 1 && classes.has(want.class)
    facts.push({ fact: `class ${want.class}`, ok })
  }
  for (const r of want.recipients) {
    const found = recipients.find((x) => x.email === r.address)
    facts.push({ fact: `${r.address} bounced`, ok: found !== undefined })
    if (r.status !== undefined) facts.push({ fact: `${r.address} status ${r.status}`, ok: found?.status === r.status })
    if (r.class !== undefined) facts.push({ fact: `${r.address} class ${r.class}`, ok: found?.class === r.class })
  }
  return facts
}

export const factsOf = (want: Expected, got: Understood): ReadonlyArray<Fact> => {
  if (want.kind === "not-a-bounce") return [{ fact: "is not a bounce", ok: got.kind !== "bounce" }]
  return want.kind === "complaint" ? complaintFacts(want, got) : bounceFacts(want, got)
}

