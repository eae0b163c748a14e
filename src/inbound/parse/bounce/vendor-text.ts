/**
 * Bounces without a DSN part: the plain-text reports of Exim, qmail, Gmail, Yahoo, GMX, mail.ru,
 * Zoho, OpenSMTPD, Exchange 2003, Domino/Notes, IMail and the like. They differ in wording but share
 * a layout: each failed recipient's address opens a line of its own (bare, in angle brackets or in
 * quotes, sometimes followed by ":" and the error), and the lines after it, up to the next such
 * line, explain that recipient's failure. Where no line opens with an address (IMail's
 * "Unknown user: a@b"), an address on a line stating a failure is taken.
 */
import type { BouncedRecipient } from "../types.ts"
import { type BounceRules, enhancedIn, isDelayText, oneLine, recipient, replyCodeIn, ruleFor, statusFromText } from "./status.ts"

export interface TextBounce {
  /** The report text, without the returned original. */
  readonly report: string
  readonly subject: string
  /** Exim's X-Failed-Recipients, when present the authoritative list. */
  readonly failed: ReadonlyArray<string>
  /** The bounce's own From and To, never a failed recipient of it. */
  readonly own: ReadonlySet<string>
}

const ADDR = String.raw`[^\s@<>"'(),;:\[\]]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]{2,}`
const LEADING = new RegExp(String.raw`^\s*(?:"(${ADDR})"|<(${ADDR})>|(${ADDR}))(.*)$`)
const ANYWHERE = new RegExp(ADDR, "g")
const FAILURE = /unknown|not found|invalid|does ?n[o']t exist|no such|rejected|refused|failed|undeliverable|not listed|full|quota|disabled|blocked|denied/i

interface Line {
  readonly index: number
  readonly email: string
  /** What follows the address on its line ("on <date>", ": 550 …", "Invalid Address, …"). */
  readonly rest: string
}

const leading = (line: string, index: number): Line | null => {
  const m = LEADING.exec(line)
  if (m === null) return null
  const email = (m[1] ?? m[2] ?? m[3]!).toLowerCase()
  return { index, email, rest: m[4]!.replace(/^\s*[:,]?/, "") }
}

const paragraphs = (text: string) =>
  text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== "")

/*
 * The recipient's own words: the paragraph that carries the code, else the line a rule recognises
 * ("The recipient name is not recognized"), else the first paragraph; for a report that explains
 * before it lists (Notes), the explaining line.
 */
const diagnosticOf = (segment: string, preamble: string, rules: BounceRules): string | null => {
  const ruleLine = (text: string) => text.split("\n").find((line) => ruleFor(line, rules) !== null)
  const own = paragraphs(segment)
  const chosen =
    own.find((p) => enhancedIn(p) !== null || replyCodeIn(p) !== null) ?? ruleLine(segment) ?? own[0] ?? ruleLine(preamble) ?? null
  return oneLine(chosen)
}

/** The failed (or, for a delay warning, delayed) recipients a plain-text bounce names. */
export const textRecipients = (input: TextBounce, rules: BounceRules): ReadonlyArray<BouncedRecipient> => {
  const lines = input.report.split("\n")
  const starts = lines.map(leading).filter((l): l is Line => l !== null && !input.own.has(l.email))
  const segments = new Map<string, { segment: string; from: number }>()
  const segmentAt = (start: Line) => {
    const next = starts.find((s) => s.index > start.index)?.index ?? lines.length
    return [start.rest, ...lines.slice(start.index + 1, next)].join("\n")
  }
  for (const start of starts) {
    if (!segments.has(start.email)) segments.set(start.email, { segment: segmentAt(start), from: start.index })
  }
  /* No line opens with an address: an address on a line that states a failure, with its paragraph. */
  if (starts.length === 0) {
    lines.forEach((line, index) => {
      // Unanchored address search is quadratic in the line length: skip lines that cannot hold one.
      if (line.length > 2000 || !line.includes("@")) return
      if (!FAILURE.test(line) && ruleFor(line, rules) === null) return
      for (const m of line.matchAll(ANYWHERE)) {
        const email = m[0].toLowerCase()
        if (input.own.has(email) || segments.has(email)) continue
        const end = lines.findIndex((l, i) => i > index && l.trim() === "")
        segments.set(email, { segment: lines.slice(index, end < 0 ? lines.length : end).join("\n"), from: index })
      }
    })
  }
  /* X-Failed-Recipients lists exactly the failed addresses; a recipient not on a line of its own
     is explained by the lines from its first mention on. */
  const mentionSegment = (email: string) => {
    const at = lines.findIndex((l) => l.toLowerCase().includes(email))
    if (at < 0) return ""
    const next = starts.find((s) => s.index > at)?.index ?? lines.length
    return lines.slice(at, next).join("\n")
  }
  const emails = input.failed.length > 0 ? input.failed : [...segments.keys()]
  const firstIndex = Math.min(...[...segments.values()].map((s) => s.from), lines.length)
  const preamble = lines.slice(0, firstIndex).join("\n")
  const delayed = isDelayText(input.subject, rules) || isDelayText(input.report, rules)
  const action = delayed ? "delayed" : "failed"
  return [...new Set(emails)].map((email) => {
    const segment = segments.get(email)?.segment ?? mentionSegment(email)
    const status = statusFromText(segment, delayed, rules, preamble)
    return recipient(email, status, action, diagnosticOf(segment, preamble, rules))
  })
}
