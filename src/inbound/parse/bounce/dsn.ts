/**
 * RFC 3464 delivery status notifications: the per-recipient field blocks of a
 * `message/delivery-status` part, or the same fields written into the text by MTAs that do not
 * build the MIME structure properly (Amazon WorkMail puts them in a text/plain part; a stray space
 * before a boundary line hides the part from a strict MIME parser).
 */
import { type Fields, field, parseFieldBlocks, stripAngles } from "../fields.ts"
import type { BouncedRecipient } from "../types.ts"
import { type BounceRules, enhancedIn, oneLine, recipient, statusFromText } from "./status.ts"

/* RFC 3464 §2.3: `Final-Recipient` is required; some MTAs (McAfee) give only `Original-Recipient`. */
const RECIPIENT_FIELDS = ["final-recipient", "x-actual-recipient", "original-recipient"]

const isRecipientBlock = (block: Fields) => RECIPIENT_FIELDS.some((name) => block.has(name))

/** `rfc822; <a@b>` → `a@b` (RFC 3464 §2.3.2 address-type prefix; the angles some MTAs add). */
const addressOf = (value: string | null): string | null => {
  if (value === null) return null
  const typed = /^\s*[A-Za-z0-9][\w.-]*\s*;(.*)$/s.exec(value)
  const address = stripAngles((typed === null ? value : typed[1]!).trim())
  return address !== null && address.includes("@") ? address.trim().toLowerCase() : null
}

/** `smtp; 550 5.1.1 …` → `550 5.1.1 …` (RFC 3464 §2.3.6 diagnostic-type prefix). */
export const withoutType = (value: string): string => {
  const typed = /^\s*[A-Za-z][\w-]*\s*;(.*)$/s.exec(value)
  return (typed === null ? value : typed[1]!).trim()
}

/*
 * RFC 3464 §2.3.3 actions; `failed` and `delayed` are the ones that report a problem. A block
 * without Action (not allowed, but seen) counts as failed unless its status says success.
 */
const actionOf = (block: Fields, status: string | null): string | null => {
  const action = (field(block, "action") ?? "").trim().toLowerCase()
  if (action.startsWith("fail")) return "failed"
  if (action.startsWith("delay")) return "delayed"
  if (action !== "") return null
  return status !== null && status.startsWith("2") ? null : "failed"
}

const fromBlock = (block: Fields, rules: BounceRules): BouncedRecipient | null => {
  const email = RECIPIENT_FIELDS.map((name) => addressOf(field(block, name))).find((a) => a !== null) ?? null
  if (email === null) return null
  const statusField = field(block, "status")
  // RFC 3464 §2.3.4: the code may be followed by a comment, "5.0.0 (permanent failure)".
  const stated = statusField === null ? null : enhancedIn(statusField)
  const action = actionOf(block, stated)
  if (action === null) return null
  const diagnosticField = field(block, "diagnostic-code")
  const diagnostic = diagnosticField === null ? null : oneLine(withoutType(diagnosticField))
  const status = stated ?? statusFromText(diagnostic ?? "", action === "delayed", rules)
  return recipient(email, status, action, diagnostic)
}

/** The per-recipient blocks of `message/delivery-status` parts. */
export const dsnBlocks = (parts: ReadonlyArray<string>): ReadonlyArray<Fields> =>
  parts.flatMap((text) => parseFieldBlocks(text)).filter(isRecipientBlock)

/*
 * DSN fields written into the text: only blocks that name a recipient and carry an Action or a
 * Status, so quoted message headers (which may include Original-Recipient) are not taken for one.
 */
export const embeddedDsnBlocks = (text: string): ReadonlyArray<Fields> =>
  parseFieldBlocks(text).filter((b) => isRecipientBlock(b) && (b.has("action") || b.has("status")))

/**
 * The failed and delayed recipients of DSN recipient blocks, or null when there is no block at all
 * (not a DSN). An empty list is a DSN that reports only successes (delivered, relayed, expanded).
 */
export const dsnRecipients = (blocks: ReadonlyArray<Fields>, rules: BounceRules): ReadonlyArray<BouncedRecipient> | null => {
  if (blocks.length === 0) return null
  const seen = new Set<string>()
  const recipients: Array<BouncedRecipient> = []
  for (const block of blocks) {
    const found = fromBlock(block, rules)
    if (found === null || seen.has(found.email)) continue
    seen.add(found.email)
    recipients.push(found)
  }
  return recipients
}
