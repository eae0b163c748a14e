/**
 * RFC 3464 delivery status notifications: the per-recipient field blocks of a
 * `message/delivery-status` part, or the same fields written into the text by MTAs that do not
 * build the MIME structure properly (Amazon WorkMail puts them in a text/plain part; a stray space
 * before a boundary line hides the part from a strict MIME parser).
 */
import { type Fields, field, parseFieldBlocks, stripAngles } from "../fields.ts"
import type { BouncedRecipient } from "../types.ts"
import { preferredStatus } from "./prefer.ts"
import { type BounceRules, enhancedIn, oneLine, recipient, statusFromText } from "./status.ts"
import { addressesIn } from "./vendor-text.ts"

/* RFC 3464 §2.3: `Final-Recipient` is required; some MTAs (McAfee) give only `Original-Recipient`. */
const RECIPIENT_FIELDS = ["final-recipient", "x-actual-recipient", "original-recipient"]

const isRecipientBlock = (block: Fields) => RECIPIENT_FIELDS.some((name) => block.has(name))

/** `rfc822; <a@b>` → `a@b` (RFC 3464 §2.3.2 address-type prefix; the angles some MTAs add). */
const addressOf = (value: string | null): string | null => {
  if (value === null) return null
  const typed = /^\s*[A-Za-z0-9][\w.-]*\s*;(.*)$/s.exec(value)
  const address = stripAngles((typed === null ? value : typed[1]!).trim())?.trim() ?? null
  return address !== null && isMailbox(address) ? address.toLowerCase() : null
}

/*
 * A mailbox, not what some MTAs write in its place: an RFC 5321 source route ("@relay:a@b", whose
 * last hop Sun Messaging Server names by its internal host), a bare "@host" (Sendmail), or the
 * pipe or file Exim delivered to ("|/usr/bin/prog a@b").
 */
const isMailbox = (address: string) => address.includes("@") && !/^[@|/]/.test(address) && !/\s/.test(address)

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
  // SendGrid writes "Action: expired" for a message it gave up on.
  if (action.startsWith("fail") || action.startsWith("expired")) return "failed"
  if (action.startsWith("delay")) return "delayed"
  if (action !== "") return null
  return status !== null && status.startsWith("2") ? null : "failed"
}

const fromBlock = (block: Fields, rules: BounceRules, fallback: () => string | null): BouncedRecipient | null => {
  const email = RECIPIENT_FIELDS.map((name) => addressOf(field(block, name))).find((a) => a !== null) ?? fallback()
  if (email === null) return null
  const statusField = field(block, "status")
  // RFC 3464 §2.3.4: the code may be followed by a comment, "5.0.0 (permanent failure)".
  const stated = statusField === null ? null : enhancedIn(statusField)
  const action = actionOf(block, stated)
  if (action === null) return null
  const diagnosticField = field(block, "diagnostic-code")
  const diagnostic = diagnosticField === null ? null : oneLine(withoutType(diagnosticField))
  const status = stated === null ? statusFromText(diagnostic ?? "", action === "delayed", rules) : preferredStatus(stated, diagnostic ?? "")
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
 * A block whose recipient is no mailbox (Exim's pipe delivery, Sendmail's bare "@host") takes the
 * next address the message lists elsewhere (`listed`, bounce.ts).
 */
export const dsnRecipients = (
  blocks: ReadonlyArray<Fields>,
  rules: BounceRules,
  listed: () => ReadonlyArray<string> = () => []
): ReadonlyArray<BouncedRecipient> | null => {
  if (blocks.length === 0) return null
  const seen = new Set<string>()
  const recipients: Array<BouncedRecipient> = []
  // Read only when a block needs it: listing the text's addresses is a pass over the whole report.
  let failed: ReadonlyArray<string> | null = null
  let spare = 0
  const nextSpare = () => {
    failed ??= listed()
    while (spare < failed.length && seen.has(failed[spare]!)) spare++
    return failed[spare] ?? null
  }
  for (const block of blocks) {
    const found = fromBlock(block, rules, nextSpare)
    if (found === null || seen.has(found.email)) continue
    seen.add(found.email)
    recipients.push(found)
  }
  return recipients
}

/*
 * OpenSMTPD and others write a bare `Status: 5.0.0` with no code in a Diagnostic-Code and put the
 * remote server's reply in the text: on the line that names the recipient ("a@b: 550 5.1.1 …
 * User unknown"), or, for a single recipient, as the reply line of Sendmail's session transcript
 * ("554 5.3.0 unknown mailer error 255"). That code is preferred as for a diagnostic (prefer.ts).
 */
const REPLY_LINE = /^\s*[45]\d\d[ -]#?[245]\.\d{1,3}\.\d{1,3}\b/

export const withTextCodes = (recipients: ReadonlyArray<BouncedRecipient>, report: string): ReadonlyArray<BouncedRecipient> => {
  const lines = report.split("\n").filter((l) => l.length < 2000 && enhancedIn(l) !== null)
  const lineOf = new Map<string, string>()
  for (const line of lines) for (const address of addressesIn(line)) if (!lineOf.has(address)) lineOf.set(address, line)
  const replyLine = recipients.length === 1 ? lines.find((l) => REPLY_LINE.test(l)) : undefined
  return recipients.map((r) => {
    if (r.diagnostic !== null && enhancedIn(r.diagnostic) !== null) return r
    const line = lineOf.get(r.email) ?? replyLine
    return line === undefined ? r : recipient(r.email, preferredStatus(r.status, line), r.action, oneLine(line))
  })
}
