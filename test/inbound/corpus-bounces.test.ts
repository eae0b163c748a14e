/**
 * The bounce corpus (../shared/corpus/bounces, SOURCES.md "Format of expected.json"): every fact
 * expected.json states about a file is checked against parseBounce. `source_expectation` rows are
 * sisimai's own view (its pseudo-codes never appear in the messages) and are not facts here; nor is
 * anything a file leaves out. A fact that cannot be derived without a file-specific hack, or one
 * Herald deliberately reads otherwise, goes in KNOWN_MISSES with its reason, and the test insists
 * those facts still miss, so a change shows up.
 */
import * as fs from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { parseBounce } from "../../src/inbound/parse/bounce.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"
import type { BounceReport } from "../../src/inbound/parse/types.ts"

const corpus = new URL("../../../shared/corpus/bounces/", import.meta.url)

interface ExpectedRecipient {
  readonly address: string
  readonly status?: string
  readonly action?: string
  readonly class?: string
  readonly diagnostic_status?: string
}

interface Expected {
  readonly kind: "bounce" | "not-a-bounce"
  readonly class?: string
  readonly recipients: ReadonlyArray<ExpectedRecipient>
}

const expected = JSON.parse(fs.readFileSync(new URL("expected.json", corpus), "utf8")) as Record<string, Expected>
const files = Object.keys(expected).sort()

/** file → facts that still miss, each with the reason it cannot be derived in general. */
const PREFERRED =
  "expected.json states the DSN Status field; Herald reports the remote server's own code from the Diagnostic-Code when the Status field is generic (bounce/prefer.ts, issue 34: sisimai's tables do the same)"

const KNOWN_MISSES: Record<string, ReadonlyArray<{ readonly fact: string; readonly reason: string }>> = {
  "sisimai--lhost-amazonses-03.eml": [{ fact: "kijitora@example.jp status 5.0.0", reason: `${PREFERRED} (5.2.2)` }],
  "sisimai--lhost-amazonses-17.eml": [{ fact: "kijitora@example.com status 4.4.7", reason: `${PREFERRED} (4.4.2)` }],
  "sisimai--lhost-courier-01.eml": [{ fact: "kijitora@example.co.jp status 5.0.0", reason: `${PREFERRED} (5.1.1)` }],
  "sisimai--lhost-sendmail-08.eml": [{ fact: "neko@example.org status 4.4.7", reason: `${PREFERRED} (4.7.1)` }]
}

interface Fact {
  readonly fact: string
  readonly ok: boolean
}

const factsOf = (want: Expected, got: BounceReport | null): ReadonlyArray<Fact> => {
  if (want.kind === "not-a-bounce") return [{ fact: "is not a bounce", ok: got === null }]
  const recipients = got?.recipients ?? []
  const facts: Array<Fact> = [
    { fact: "is a bounce", ok: got !== null },
    { fact: `names ${want.recipients.length} recipient(s)`, ok: recipients.length === want.recipients.length }
  ]
  if (want.class !== undefined) {
    const classes = new Set(recipients.map((r) => r.class))
    const ok =
      want.class === "mixed" ? classes.has("hard") && classes.has("soft") : classes.size === 1 && classes.has(want.class === "hard" ? "hard" : "soft")
    facts.push({ fact: `class ${want.class}`, ok })
  }
  for (const r of want.recipients) {
    const found = recipients.find((x) => x.email === r.address.toLowerCase())
    facts.push({ fact: `${r.address} bounced`, ok: found !== undefined })
    if (r.status !== undefined) facts.push({ fact: `${r.address} status ${r.status}`, ok: found?.status === r.status })
    if (r.action !== undefined) facts.push({ fact: `${r.address} action ${r.action}`, ok: found?.action === r.action })
    if (r.class !== undefined) facts.push({ fact: `${r.address} class ${r.class}`, ok: found?.class === r.class })
    if (r.diagnostic_status !== undefined) {
      const ok = found?.diagnostic?.includes(r.diagnostic_status) === true
      facts.push({ fact: `${r.address} diagnostic carries ${r.diagnostic_status}`, ok })
    }
  }
  return facts
}

const tally = { hit: 0, total: 0 }

describe("bounce corpus", () => {
  afterAll(() => {
    const percent = tally.total === 0 ? 0 : (100 * tally.hit) / tally.total
    console.log(`bounces: ${tally.hit}/${tally.total} facts (${percent.toFixed(1)}%)`)
  })

  it.each(files)("%s yields the facts in expected.json", async (file) => {
    const raw = fs.readFileSync(new URL(file, corpus))
    const report = parseBounce(await readMail(raw), raw)
    const facts = factsOf(expected[file]!, report)
    tally.total += facts.length
    tally.hit += facts.filter((f) => f.ok).length
    const misses = facts.filter((f) => !f.ok).map((f) => f.fact)
    expect(misses).toEqual((KNOWN_MISSES[file] ?? []).map((m) => m.fact))
  })
})
