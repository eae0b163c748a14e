/**
 * Status codes for bounced recipients: enhanced codes (RFC 3463) and basic SMTP reply codes
 * (RFC 5321 §4.2) as they appear in free text, plus the text rules of config/bounce-rules.json for
 * the bounces that give no code at all. The class rule is the MTA's (src/mta/classify.ts):
 * 5.x.x hard, 4.x.x soft.
 */
import * as fs from "node:fs"
import type { BounceClass, BouncedRecipient } from "../types.ts"

interface TextRule {
  readonly pattern: RegExp
  readonly status: string
}

export interface BounceRules {
  readonly rules: ReadonlyArray<TextRule>
  readonly delay: ReadonlyArray<RegExp>
  /** What MTAs write before a failed address that opens a line, anchored at the line's start. */
  readonly recipientLabel: RegExp
  /** Phrases that make a line naming an address a failure line. */
  readonly failure: ReadonlyArray<RegExp>
}

interface RulesFile {
  readonly rules: ReadonlyArray<{ pattern: string; status: string }>
  readonly delay_patterns: ReadonlyArray<string>
  readonly recipient_labels?: ReadonlyArray<{ pattern: string }>
  readonly failure_phrases?: ReadonlyArray<{ pattern: string }>
}

export const parseBounceRules = (json: unknown): BounceRules => {
  const data = json as RulesFile
  const labels = (data.recipient_labels ?? []).map((l) => `(?:${l.pattern})`)
  return {
    rules: data.rules.map((r) => ({ pattern: new RegExp(r.pattern, "i"), status: r.status })),
    delay: data.delay_patterns.map((p) => new RegExp(p, "i")),
    // Never empty: `(?!)` matches nothing, so a rules file without labels strips nothing.
    recipientLabel: new RegExp(`^\\s*(?:${labels.length === 0 ? "(?!)" : labels.join("|")})\\s*`, "i"),
    failure: (data.failure_phrases ?? []).map((p) => new RegExp(p.pattern, "i"))
  }
}

export const defaultBounceRules: BounceRules = parseBounceRules(
  JSON.parse(fs.readFileSync(new URL("../../../../config/bounce-rules.json", import.meta.url), "utf8"))
)

/*
 * Neither side may touch a letter, digit or a further dotted part, so IP addresses ("192.0.2.153")
 * and version numbers ("v4.6.1") are not read as codes; subject and detail are 1–3 digits
 * (RFC 3463 §2, "5.1.10", "4.7.650").
 */
const ENHANCED = /(?<![\w.])([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)/
const ENHANCED_GLOBAL = new RegExp(ENHANCED.source, "g")
/* A basic reply code stands alone: "said: 550 …", "550-5.7.1 …", "ERROR_CODE :550,". */
const REPLY = /(?<![\w.=/#-])([45]\d\d)(?![\w.]|:\d)/

/** The first enhanced status code in `text` ("5.0.0 (permanent failure)" → "5.0.0"), or null. */
export const enhancedIn = (text: string): string | null => ENHANCED.exec(text)?.[0] ?? null

/** Every enhanced status code in `text`, in order. */
export const enhancedAll = (text: string): ReadonlyArray<string> => [...text.matchAll(ENHANCED_GLOBAL)].map((m) => m[0])

/** The first 4xx/5xx SMTP reply code in `text`, or null. */
export const replyCodeIn = (text: string): string | null => REPLY.exec(text)?.[1] ?? null

export const ruleFor = (text: string, rules: BounceRules): TextRule | null =>
  rules.rules.find((rule) => rule.pattern.test(text)) ?? null

export const isDelayText = (text: string, rules: BounceRules): boolean => rules.delay.some((re) => re.test(text))

/**
 * The status a recipient's text states or implies, most specific first: an enhanced code; a text
 * rule, in the class of the reply code beside it (or of the delay, for a warning); the reply code's
 * class as x.0.0; else 5.0.0 for a failure and 4.0.0 for a delay (RFC 3463 §3.1 "other or
 * undefined"). `fallbackText` (the bounce's shared explanation) is read for a rule only when the
 * recipient's own text has no enhanced code and matches no rule.
 */
export const statusFromText = (text: string, delayed: boolean, rules: BounceRules, fallbackText = ""): string => {
  const enhanced = enhancedIn(text)
  if (enhanced !== null) return enhanced
  const reply = replyCodeIn(text)
  const rule = ruleFor(text, rules) ?? ruleFor(fallbackText, rules)
  const classDigit = reply !== null ? reply[0]! : delayed ? "4" : null
  if (rule !== null) return classDigit === null ? rule.status : `${classDigit}${rule.status.slice(1)}`
  if (reply !== null) return `${reply[0]}.0.0`
  return delayed ? "4.0.0" : "5.0.0"
}

/** The class rule of the MTA: 4.x.x is soft, everything else that failed is hard. */
export const classOf = (status: string): BounceClass => (status.startsWith("4") ? "soft" : "hard")

export const recipient = (email: string, status: string, action: string, diagnostic: string | null): BouncedRecipient => ({
  email: email.toLowerCase(),
  status,
  action,
  class: classOf(status),
  diagnostic
})

/** Whitespace runs (folded lines, indentation) become one space; empty text becomes null. */
export const oneLine = (text: string | null | undefined): string | null => {
  const flat = (text ?? "").replace(/\s+/g, " ").trim()
  return flat === "" ? null : flat.length > 1000 ? `${flat.slice(0, 997)}...` : flat
}
