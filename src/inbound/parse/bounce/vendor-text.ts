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
  /** The bounce's own From and To, never a failed recipient it only mentions. */
  readonly own: ReadonlySet<string>
  /**
   * The bounce's own From, never a failed recipient. Its To (the original's sender) may be one when
   * a line opens with it: a message sent to oneself through a relay comes back to the same address.
   */
  readonly sender: string | null
}

const ADDR = String.raw`[^\s@<>"'(),;:\[\]]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]{2,}`
const LEADING = new RegExp(String.raw`^\s*(?:"(${ADDR})"|<(${ADDR})>|(${ADDR}))(.*)$`)
const ANYWHERE = new RegExp(ADDR, "g")
/* Words of a line that states a failure; the rules file adds the phrases of particular MTAs. */
const FAILURE = /unknown|not found|invalid|does ?n[o']t exist|no such|rejected|refused|failed|undeliverable|not listed|full|quota|disabled|blocked|denied/i

const isFailureLine = (line: string, rules: BounceRules) => FAILURE.test(line) || rules.failure.some((re) => re.test(line))

/*
 * A bounce reports on one message, which had at most HERALD_MAX_RECIPIENTS recipients (1000 by
 * default). A text naming more failed addresses than this is not read past it: the bound keeps
 * the parse linear in the message's size.
 */
const MAX_TEXT_RECIPIENTS = 1000
/* The lines that explain an address found on a failure line: a few paragraphs in every MTA's report. */
const MAX_SEGMENT_LINES = 100

interface Line {
  readonly index: number
  readonly email: string
  /** What follows the address on its line ("on <date>", ": 550 …", "Invalid Address, …"). */
  readonly rest: string
}

/* An address that opens a line, after any label the MTA writes before it (rules: recipient_labels). */
const leading = (line: string, index: number, rules: BounceRules): Line | null => {
  const m = LEADING.exec(line.replace(rules.recipientLabel, ""))
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

/*
 * No line opens with an address: an address on a line that states a failure, explained by the
 * lines from there to the next such address (DragonFly writes the address, then the remote
 * server's reply a paragraph further down).
 */
const mentioned = (lines: ReadonlyArray<string>, own: ReadonlySet<string>, rules: BounceRules) => {
  const found = new Map<string, number>()
  let end = lines.length
  for (let index = 0; index < lines.length && end === lines.length; index++) {
    const line = lines[index]!
    // Unanchored address search is quadratic in the line length: skip lines that cannot hold one.
    if (line.length > 2000 || !line.includes("@")) continue
    if (!isFailureLine(line, rules) && ruleFor(line, rules) === null) continue
    for (const m of line.matchAll(ANYWHERE)) {
      const email = m[0].toLowerCase()
      if (own.has(email) || found.has(email)) continue
      // Past the bound, the lines from here on explain no recipient that is read.
      if (found.size >= MAX_TEXT_RECIPIENTS) end = index
      else found.set(email, index)
    }
  }
  // In line order (a Map keeps insertion order): each segment ends where the next address's line starts.
  const starts = [...found]
  return new Map(
    starts.map(([email, index], k) => {
      let after = k + 1
      while (after < starts.length && starts[after]![1] === index) after++
      const next = Math.min(starts[after]?.[1] ?? end, index + MAX_SEGMENT_LINES)
      return [email, { segment: lines.slice(index, Math.max(next, index + 1)).join("\n"), from: index }] as const
    })
  )
}

/** The addresses in a line of at most 2000 characters (an unanchored search is quadratic in its length). */
export const addressesIn = (line: string): ReadonlyArray<string> =>
  line.length > 2000 || !line.includes("@") ? [] : [...line.matchAll(ANYWHERE)].map((m) => m[0].toLowerCase())

/** Whether a report's text says anything failed (or was delayed). */
export const statesFailure = (report: string, rules: BounceRules): boolean =>
  isFailureLine(report, rules) || ruleFor(report, rules) !== null || isDelayText(report, rules)

/** The addresses that open lines of a report (other than the bounce's own), in order. */
export const listedAddresses = (report: string, own: ReadonlySet<string>, rules: BounceRules): ReadonlyArray<string> => [
  ...new Set(
    report
      .split("\n")
      .map((line, index) => leading(line, index, rules))
      .flatMap((l) => (l === null || own.has(l.email) ? [] : [l.email]))
  )
]

/** For each start, the line where the next start naming another address is (Exim repeats an address). */
const nextOtherStart = (starts: ReadonlyArray<Line>, end: number): ReadonlyArray<number> => {
  const next = new Array<number>(starts.length)
  for (let k = starts.length - 1; k >= 0; k--) {
    const after = starts[k + 1]
    next[k] = after === undefined ? end : after.email !== starts[k]!.email ? after.index : next[k + 1]!
  }
  return next
}

/* X-Failed-Recipients lists exactly the failed addresses; one not on a line of its own is explained
   by the lines from its first mention on, up to the next start. */
const mentionSegments = (lines: ReadonlyArray<string>, emails: ReadonlyArray<string>, starts: ReadonlyArray<Line>) => {
  const wanted = new Set(emails)
  const first = new Map<string, number>()
  lines.forEach((line, index) => {
    for (const address of addressesIn(line)) if (wanted.has(address) && !first.has(address)) first.set(address, index)
  })
  const startLines = starts.map((s) => s.index)
  return (email: string) => {
    const at = first.get(email)
    if (at === undefined) return ""
    // Binary search: the first start after the mention (starts are in line order).
    let low = 0
    let high = startLines.length
    while (low < high) {
      const mid = (low + high) >> 1
      if (startLines[mid]! > at) high = mid
      else low = mid + 1
    }
    const next = startLines[low] ?? lines.length
    return lines.slice(at, next).join("\n")
  }
}

/** The failed (or, for a delay warning, delayed) recipients a plain-text bounce names. */
export const textRecipients = (input: TextBounce, rules: BounceRules): ReadonlyArray<BouncedRecipient> => {
  const lines = input.report.split("\n")
  const starts = lines.map((line, index) => leading(line, index, rules)).filter((l): l is Line => l !== null && l.email !== input.sender)
  const segments = new Map<string, { segment: string; from: number }>()
  const nextOther = nextOtherStart(starts, lines.length)
  starts.forEach((start, k) => {
    if (segments.has(start.email) || segments.size >= MAX_TEXT_RECIPIENTS) return
    segments.set(start.email, { segment: [start.rest, ...lines.slice(start.index + 1, nextOther[k])].join("\n"), from: start.index })
  })
  if (starts.length === 0) for (const [email, found] of mentioned(lines, input.own, rules)) segments.set(email, found)
  const emails = [...new Set(input.failed.length > 0 ? input.failed : segments.keys())].slice(0, MAX_TEXT_RECIPIENTS)
  const mentionSegment = mentionSegments(lines, emails.filter((e) => !segments.has(e)), starts)
  // A loop, not Math.min(...spread): a report may name more recipients than the call stack holds arguments.
  let firstIndex = lines.length
  for (const s of segments.values()) firstIndex = Math.min(firstIndex, s.from)
  const preamble = lines.slice(0, firstIndex).join("\n")
  const delayed = isDelayText(input.subject, rules) || isDelayText(input.report, rules)
  const action = delayed ? "delayed" : "failed"
  return emails.map((email) => {
    const segment = segments.get(email)?.segment ?? mentionSegment(email)
    const status = statusFromText(segment, delayed, rules, preamble)
    return recipient(email, status, action, diagnosticOf(segment, preamble, rules))
  })
}
