/** Types and small helpers shared by the complaint forms (ARF, JMRP, SES, Apple Mail unsubscribe). */
import type { ComplaintReport } from "../types.ts"

/** Which form the report came in. */
export type ComplaintFormat = "arf" | "jmrp" | "ses" | "unsubscribe"

/**
 * Everything else the report states, for the operator's `parse` view and the corpus test. ARF
 * names (RFC 5965 §3.1-3.2), lower-case with underscores; null or empty where the report is silent.
 */
export interface FeedbackDetails {
  readonly format: ComplaintFormat
  readonly user_agent: string | null
  readonly version: string | null
  readonly source_ip: string | null
  /** `Arrival-Date`, else the older drafts' `Received-Date`, as written. */
  readonly arrival_date: string | null
  /** `Original-Mail-From` without angle brackets; null when empty (bounces, RFC 6591 reports). */
  readonly original_mail_from: string | null
  readonly original_rcpt_to: ReadonlyArray<string>
  readonly removal_recipient: ReadonlyArray<string>
  readonly reported_domain: ReadonlyArray<string>
  /** RFC 6591 §3.1 `Auth-Failure` (dmarc, spf, dkim, adsp …) of a failure report. */
  readonly auth_failure: string | null
  /** The address in the report's own `From:`, lower-cased. */
  readonly reporter_from: string | null
  /** `To:` of the enclosed original, lower-cased. */
  readonly enclosed_to: ReadonlyArray<string>
  /** For an unsubscribe request: the address it was sent to (the List-Unsubscribe mailto target). */
  readonly unsubscribe_to: ReadonlyArray<string>
}

export interface ParsedComplaint extends ComplaintReport {
  readonly details: FeedbackDetails
}

export const emptyDetails = (format: ComplaintFormat, reporterFrom: string | null): FeedbackDetails => ({
  format,
  user_agent: null,
  version: null,
  source_ip: null,
  arrival_date: null,
  original_mail_from: null,
  original_rcpt_to: [],
  removal_recipient: [],
  reported_domain: [],
  auth_failure: null,
  reporter_from: reporterFrom,
  enclosed_to: [],
  unsubscribe_to: []
})

const ADDRESS = /^[^\s@<>",;:()[\]\\]+@[^\s@<>",;:()[\]\\]+\.[^\s@<>",;:()[\]\\]+$/

/**
 * One address, lower-cased, or null when the value is not one ("<Undisclosed Recipients>",
 * "undisclosed", "redacted"). Accepts `Name <a@b>`, `<a@b>`, `a@b (comment)` and the
 * `rfc822;` address-type prefix that DSN-minded reporters put in `Original-Rcpt-To`.
 */
export const normaliseAddress = (value: string): string | null => {
  const trimmed = value.trim().replace(/^rfc822\s*;\s*/i, "")
  const angle = /<([^<>]*)>/.exec(trimmed)
  const bare = angle === null ? trimmed.replace(/"(?:[^"\\]|\\.)*"/g, "").replace(/\([^()]*\)/g, "").trim() : angle[1]!.trim()
  return ADDRESS.test(bare) ? bare.toLowerCase() : null
}

/** The addresses of an address-list header (RFC 5322 §3.4); commas inside quotes or brackets do not split. */
export const addressList = (value: string | null): ReadonlyArray<string> => {
  if (value === null) return []
  const pieces: Array<string> = []
  let current = ""
  let quoted = false
  let angle = 0
  let paren = 0
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!
    if (quoted) {
      if (c === "\\") {
        current += c + (value[i + 1] ?? "")
        i++
        continue
      }
      if (c === '"') quoted = false
    } else if (c === '"') quoted = true
    else if (c === "<") angle++
    else if (c === ">") angle = Math.max(0, angle - 1)
    else if (c === "(") paren++
    else if (c === ")") paren = Math.max(0, paren - 1)
    else if ((c === "," || c === ";") && angle === 0 && paren === 0) {
      pieces.push(current)
      current = ""
      continue
    }
    current += c
  }
  pieces.push(current)
  // Group syntax (`Friends: a@b, c@d;`): drop the display name before the colon.
  return unique(pieces.map((p) => normaliseAddress(p.replace(/^[^<>"@]*:/, ""))).filter((a): a is string => a !== null))
}

export const unique = <A>(values: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(values)]
