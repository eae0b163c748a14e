/**
 * The DMARC aggregate report parser against the real reports in ../shared/corpus/dmarc/: every
 * fact expected.json states (SOURCES.md, "Format of expected.json") must come out of
 * `parseDmarcBytes` (bare files) or `readMail` + `parseDmarcMail` (`.eml`), and no bounce or
 * complaint of ../shared/corpus/bounces/ and /arf/ may be taken for a DMARC report mail.
 */
import { readdirSync, readFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { type DmarcParse, parseDmarcBytes, parseDmarcMail } from "../../src/inbound/parse/dmarc/index.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"
import type { DmarcReport } from "../../src/inbound/parse/types.ts"

const corpus = new URL("../../../shared/corpus/", import.meta.url)
const dmarcDir = new URL("dmarc/", corpus)

interface DmarcFacts {
  readonly org_name?: string
  readonly report_id?: string
  readonly policy_domain?: string
  readonly policy_p?: string
  readonly begin?: number
  readonly end?: number
  readonly records?: number
  readonly messages?: number
  readonly parse_error?: boolean
}

const expected = JSON.parse(readFileSync(new URL("expected.json", dmarcDir), "utf8")) as Record<string, DmarcFacts>
const files = Object.keys(expected).sort()

/**
 * Facts that are stated but not derived, `file: fact` → why. Asserted to miss exactly, so a fix
 * shows up as a failure that asks for the entry to be removed.
 */
const KNOWN_MISSES: Record<string, string> = {}

/** Where each fact lives in Herald's output. */
const FACTS: ReadonlyArray<readonly [keyof DmarcFacts, (r: DmarcReport) => unknown]> = [
  ["org_name", (r) => r.org_name],
  ["report_id", (r) => r.report_id],
  ["policy_domain", (r) => r.domain],
  ["policy_p", (r) => r.policy_p],
  ["begin", (r) => r.date_begin],
  ["end", (r) => r.date_end],
  ["records", (r) => r.records],
  ["messages", (r) => r.messages],
]

const tally = { hit: 0, total: 0 }
const misses: Array<string> = []

const parse = async (file: string): Promise<DmarcParse | null> => {
  const raw = readFileSync(new URL(encodeURIComponent(file), dmarcDir))
  return file.endsWith(".eml") ? parseDmarcMail(await readMail(raw)) : parseDmarcBytes(raw)
}

describe("DMARC aggregate report corpus", () => {
  afterAll(() => {
    const pct = tally.total === 0 ? 0 : (100 * tally.hit) / tally.total
    console.log(`dmarc: ${tally.hit}/${tally.total} facts (${pct.toFixed(1)}%)`)
    if (misses.length > 0) console.log(`dmarc misses: ${misses.join(", ")}`)
  })

  it.each(files)("%s yields the facts in expected.json", async (file) => {
    const facts = expected[file]!
    const result = await parse(file)
    const observed: Array<readonly [string, boolean]> = []
    if (facts.parse_error === true) {
      observed.push(["parse_error", result !== null && result.reports.length === 0 && result.errors.length > 0 && result.errors.every((e) => e.length > 0)])
    } else {
      // Each corpus file carries exactly one report, read without complaint.
      expect(result).not.toBeNull()
      expect(result!.errors).toEqual([])
      expect(result!.reports).toHaveLength(1)
      const report = result!.reports[0]!
      expect(report.rows).toHaveLength(report.records)
      expect(report.rows.reduce((sum, row) => sum + row.count, 0)).toBe(report.messages)
      for (const [name, read] of FACTS) {
        if (facts[name] === undefined) continue
        observed.push([name, read(report) === facts[name]])
      }
    }
    for (const [name, hit] of observed) {
      const key = `${file}: ${name}`
      tally.total += 1
      if (hit) tally.hit += 1
      else misses.push(key)
      expect({ fact: key, hit }).toEqual({ fact: key, hit: !(key in KNOWN_MISSES) })
    }
  })

  it("states every known miss against a fact that exists", () => {
    for (const key of Object.keys(KNOWN_MISSES)) {
      const [file, fact] = key.split(": ") as [string, string]
      expect(expected[file]?.[fact as keyof DmarcFacts]).toBeDefined()
    }
  })
})

describe("no misfires", () => {
  const mails = (folder: string) =>
    readdirSync(new URL(`${folder}/`, corpus))
      .filter((f) => f.endsWith(".eml"))
      .sort()
      .map((f) => [`${folder}/${f}`] as const)

  it.each([...mails("bounces"), ...mails("arf")])("%s is not taken for a DMARC report mail", async (path) => {
    const mail = await readMail(readFileSync(new URL(path.split("/").map(encodeURIComponent).join("/"), corpus)))
    expect(parseDmarcMail(mail)).toBeNull()
  })
})
