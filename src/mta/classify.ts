/**
 * What an SMTP reply means for a delivery: a pure, table-driven function. The rules live in
 * config/reply-rules.json; the fallbacks follow RFC 5321 §4.2.1: 2yz done, 4yz try again later
 * (deferred), 5yz never again (bounced). Enhanced status codes (RFC 3463) come from the reply
 * text, else are derived from the basic code. 421 and x.7.x temporary replies also ask for a slower
 * pace (throttle).
 */
import * as fs from "node:fs"

export interface Reply {
  /** null: no reply at all (connection refused, timeout, TLS or DNS failure). */
  readonly code: number | null
  readonly text: string
}

export interface Classification {
  readonly outcome: "sent" | "bounced" | "deferred"
  readonly status: string
  readonly category: "hard" | "soft"
  readonly suppress: boolean
  readonly throttle: boolean
}

interface Rule {
  readonly pattern: RegExp
  readonly codes: ReadonlyArray<number>
  readonly outcome: Classification["outcome"]
  readonly status: string
  readonly suppress: boolean
  readonly throttle: boolean
}

export interface ReplyRules {
  readonly rules: ReadonlyArray<Rule>
  readonly suppressStatuses: ReadonlyArray<RegExp>
}

export const parseReplyRules = (json: unknown): ReplyRules => {
  const data = json as {
    suppress_statuses: Array<string>
    rules: Array<{ pattern: string; codes: Array<number>; outcome: Rule["outcome"]; status: string; suppress?: boolean; throttle?: boolean }>
  }
  return {
    suppressStatuses: data.suppress_statuses.map((s) => new RegExp(s)),
    rules: data.rules.map((r) => ({
      pattern: new RegExp(r.pattern, "i"),
      codes: r.codes,
      outcome: r.outcome,
      status: r.status,
      suppress: r.suppress ?? false,
      throttle: r.throttle ?? false
    }))
  }
}

export const defaultReplyRules: ReplyRules = parseReplyRules(
  JSON.parse(fs.readFileSync(new URL("../../config/reply-rules.json", import.meta.url), "utf8"))
)

const ENHANCED = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/

export const enhancedStatus = (reply: Reply): string => {
  const found = ENHANCED.exec(reply.text)
  if (found !== null && (reply.code === null || String(reply.code)[0] === found[1])) return found[0]
  if (reply.code === null) return "4.4.1" // no answer from the host (RFC 3463 §3.5)
  return `${String(reply.code)[0]}.0.0`
}

export const classifyReply = (reply: Reply, rules: ReplyRules = defaultReplyRules): Classification => {
  const status = enhancedStatus(reply)
  for (const rule of rules.rules) {
    if (reply.code !== null && rule.codes.includes(reply.code) && rule.pattern.test(reply.text)) {
      const finalStatus = ENHANCED.test(reply.text) && status[0] === rule.status[0] ? status : rule.status
      return {
        outcome: rule.outcome,
        status: finalStatus,
        category: finalStatus.startsWith("5") ? "hard" : "soft",
        suppress: rule.suppress,
        throttle: rule.throttle
      }
    }
  }
  if (reply.code !== null && reply.code >= 200 && reply.code < 300) {
    return { outcome: "sent", status, category: "soft", suppress: false, throttle: false }
  }
  if (reply.code !== null && reply.code >= 500) {
    return {
      outcome: "bounced",
      status,
      category: "hard",
      suppress: rules.suppressStatuses.some((re) => re.test(status)),
      throttle: false
    }
  }
  return {
    outcome: "deferred",
    status,
    category: "soft",
    suppress: false,
    throttle: reply.code === 421 || /^4\.7\./.test(status)
  }
}

/**
 * Whether a hard bounce puts the address on the suppression list (DESIGN "Bounces"): the statuses
 * in `suppress_statuses`, or a code-less 5.0.0 whose text a suppressing rule recognises (a "user
 * unknown" bounce that carries no enhanced code). Used for SMTP-time replies and DSNs alike.
 */
export const suppressesAddress = (status: string, text: string, rules: ReplyRules = defaultReplyRules): boolean =>
  status.startsWith("5.") &&
  (rules.suppressStatuses.some((re) => re.test(status)) ||
    (status === "5.0.0" && rules.rules.some((rule) => rule.suppress && rule.pattern.test(text))))
