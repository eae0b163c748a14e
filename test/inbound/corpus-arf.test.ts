/**
 * The complaint parser against the real feedback reports in ../shared/corpus/arf/: every fact
 * expected.json states (see SOURCES.md, "Format of expected.json") must come out of
 * `parseComplaint`, and no bounce of ../shared/corpus/bounces/ may be taken for a complaint.
 */
import { readdirSync, readFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { type ParsedComplaint, parseComplaint } from "../../src/inbound/parse/complaint.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"

const arfDir = new URL("../../../shared/corpus/arf/", import.meta.url)
const bounceDir = new URL("../../../shared/corpus/bounces/", import.meta.url)

interface ArfFacts {
  readonly feedback_type?: string
  readonly user_agent?: string
  readonly version?: string
  readonly original_rcpt_to?: ReadonlyArray<string>
  readonly original_mail_from?: string
  readonly reported_domain?: ReadonlyArray<string>
  readonly source_ip?: string
  readonly arrival_date?: string
  readonly removal_recipient?: ReadonlyArray<string>
  readonly reporter_from?: string
  readonly isp?: string
  readonly enclosed_to?: string
  readonly feedback_type_note?: string
  readonly source_expectation?: { readonly feedback_types?: ReadonlyArray<string> }
}

const readJson = (dir: URL) => JSON.parse(readFileSync(new URL("expected.json", dir), "utf8")) as unknown
const expected = readJson(arfDir) as Record<string, ArfFacts>
const files = Object.keys(expected).sort()

/**
 * expected.json does not state the enclosed original's identity, so it was read by hand from each
 * file: the Message-ID (null where the enclosed original has none, is redacted, or is absent) and
 * the Subject that becomes the `email.complained` event's subject.
 */
const ENCLOSED: Record<string, { readonly messageId: string | null; readonly subject: string | null }> = {
  "parsedmarc--Netease_DMARC_Failure_Report_Rent_Reminder.eml": {
    messageId: "oguVx1AxQayV5Sv2nYK-rA@ismtpd0007p1las1.sendgrid.net",
    subject: "Rent Reminder"
  },
  "parsedmarc--dmarc_ruf_report_linkedin.crlf.eml": {
    messageId: "01010101010101010101010101010101@ABAB01MS0016.someserver.loc",
    subject: "Subject line, could be UTF8 encoded"
  },
  "sisimai--arf-01.eml": { messageId: null, subject: "Kijitora cat family" },
  "sisimai--arf-02.eml": { messageId: "000000000000000000000000.smtp@example.com", subject: "Nyaaaaaaaan" },
  "sisimai--arf-11.eml": { messageId: "ffffffffffffffffffffffffff0000000000@example.net", subject: "Nyaaan" },
  "sisimai--arf-12.eml": { messageId: "0000000000000000000000000@example.net", subject: "Nyaaan" },
  "sisimai--arf-14.eml": {
    messageId: "2222222222222222-00000000-eeee-eeee-ffff-222222222222-111111@email.amazonses.com",
    subject: "Nyaan"
  },
  "sisimai--arf-15.eml": { messageId: "ffffffffffffffffffffffff00000000@example.net", subject: "Nyaan" },
  "sisimai--arf-16.eml": { messageId: "ffffffffffffffffffffffff0000000@example.jp", subject: "Nyaan" },
  "sisimai--arf-17.eml": { messageId: "EEEEEEEE-0000-0000-0000-EEEEEEEE2222@example.net", subject: "Nyaan" },
  "sisimai--arf-20.eml": { messageId: "000000000eee@example.net", subject: "Nyaan" },
  "sisimai--arf-22.eml": { messageId: "0000000000fffffffff0000000000000@example.com", subject: "Nyaan" },
  "sisimai--arf-25.eml": { messageId: null, subject: null },
  "sisimai--arf-26.eml": { messageId: null, subject: null },
  // The SES notification quotes the original's headers, without a Message-ID among them.
  "sisimai--lhost-amazonses-11.eml": { messageId: null, subject: "Nyaan" }
}

/**
 * Facts that are stated but not derived, `file: fact` → why. Asserted to miss exactly, so a fix
 * shows up as a failure that asks for the entry to be removed.
 */
const KNOWN_MISSES: Record<string, string> = {}

interface Fact {
  readonly name: string
  readonly expected: unknown
  readonly actual: (r: ParsedComplaint) => unknown
}

/** The stated facts of one file, each with where Herald's output carries it. */
const factsOf = (file: string, e: ArfFacts): ReadonlyArray<Fact> => {
  const facts: Array<Fact> = []
  const add = (name: string, value: unknown, actual: (r: ParsedComplaint) => unknown) => {
    if (value !== undefined) facts.push({ name, expected: value, actual })
  }
  // The non-ARF forms have no Feedback-Type; sisimai's reading (its test table, or as the note
  // quotes it, "sisimai classifies it as abuse") stands in.
  const sisimaiType = e.source_expectation?.feedback_types?.[0] ?? /classifies it as ([a-z-]+)/.exec(e.feedback_type_note ?? "")?.[1]
  add("feedback_type", e.feedback_type ?? sisimaiType, (r) => r.feedback_type)
  add("isp", e.isp, (r) => r.isp)
  add(
    "recipients",
    e.original_rcpt_to ?? e.removal_recipient ?? (e.enclosed_to === undefined ? undefined : [e.enclosed_to]),
    (r) => r.recipients
  )
  add("original_message_id", ENCLOSED[file]?.messageId, (r) => r.original_message_id)
  add("original.messageId", ENCLOSED[file]?.messageId, (r) => r.original.messageId)
  add("original.subject", ENCLOSED[file]?.subject, (r) => r.original.subject)
  add("user_agent", e.user_agent, (r) => r.details.user_agent)
  add("version", e.version, (r) => r.details.version)
  add("original_rcpt_to", e.original_rcpt_to, (r) => r.details.original_rcpt_to)
  add("original_mail_from", e.original_mail_from, (r) => r.details.original_mail_from)
  add("reported_domain", e.reported_domain, (r) => r.details.reported_domain)
  add("source_ip", e.source_ip, (r) => r.details.source_ip)
  add("arrival_date", e.arrival_date, (r) => r.details.arrival_date)
  add("removal_recipient", e.removal_recipient, (r) => r.details.removal_recipient)
  add("reporter_from", e.reporter_from, (r) => r.details.reporter_from)
  add("enclosed_to", e.enclosed_to === undefined ? undefined : [e.enclosed_to], (r) => r.details.enclosed_to)
  return facts
}

const tally = new Map<string, { hits: number; total: number }>()
const count = (fact: string, hit: boolean) => {
  const t = tally.get(fact) ?? { hits: 0, total: 0 }
  tally.set(fact, { hits: t.hits + (hit ? 1 : 0), total: t.total + 1 })
}

describe("ARF corpus", () => {
  it("covers every .eml of the folder, and every file has an enclosed-original row", () => {
    const emls = readdirSync(arfDir).filter((f) => f.endsWith(".eml")).sort()
    expect(emls).toEqual(files)
    expect(Object.keys(ENCLOSED).sort()).toEqual(files)
    expect(files.length).toBeGreaterThanOrEqual(15)
  })

  it.each(files)("%s yields the facts in expected.json", async (file) => {
    const raw = readFileSync(new URL(file, arfDir))
    const result = parseComplaint(await readMail(raw), raw)
    expect(result, "recognised as a feedback report").not.toBeNull()
    const facts = factsOf(file, expected[file]!)
    const got: Record<string, unknown> = {}
    const want: Record<string, unknown> = {}
    const misses: Array<string> = []
    for (const fact of facts) {
      const actual = result === null ? undefined : fact.actual(result)
      const hit = JSON.stringify(actual) === JSON.stringify(fact.expected)
      count(fact.name, hit)
      if (!hit) misses.push(`${file}: ${fact.name}`)
      if (KNOWN_MISSES[`${file}: ${fact.name}`] === undefined) {
        got[fact.name] = actual
        want[fact.name] = fact.expected
      }
    }
    expect(got).toEqual(want)
    expect(misses).toEqual(Object.keys(KNOWN_MISSES).filter((k) => k.startsWith(`${file}: `)))
  })

  afterAll(() => {
    const all = [...tally.values()].reduce((a, t) => ({ hits: a.hits + t.hits, total: a.total + t.total }), { hits: 0, total: 0 })
    const per = [...tally.entries()].map(([name, t]) => `${name} ${t.hits}/${t.total}`).join(", ")
    console.log(`arf: ${all.hits}/${all.total} facts (${((100 * all.hits) / Math.max(1, all.total)).toFixed(1)}%)\n  ${per}`)
  })
})

describe("bounce corpus", () => {
  it("no bounce and no other non-complaint of the bounce corpus is read as a complaint", async () => {
    const bounces = readJson(bounceDir) as Record<string, { readonly kind?: string }>
    const names = Object.keys(bounces).filter((f) => bounces[f]!.kind === "bounce" || bounces[f]!.kind === "not-a-bounce")
    expect(names.length).toBeGreaterThanOrEqual(60)
    const taken: Array<string> = []
    for (const file of names) {
      const raw = readFileSync(new URL(file, bounceDir))
      const result = parseComplaint(await readMail(raw), raw)
      if (result !== null) taken.push(`${file}: ${result.details.format} ${result.feedback_type}`)
    }
    expect(taken).toEqual([])
  })
})
