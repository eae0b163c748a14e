/**
 * SMTP submission's replies (README "SMTP submission", the table): each refusal with the
 * same message text as the API's error for the same fault, after the reply code and enhanced
 * status code SMTP clients act on.
 */
import { Effect } from "effect"
import { unauthorized } from "../../http/errors.ts"
import { idempotencyConflictMessage, type MailRefusal, mailRefusal, sendRateMessage } from "../mail-refusals.ts"
import type { Refusal } from "./message.ts"

/** What a message is called in the overage refusal's text ("This message needs 3 emails but …"). */
const WHAT = "This message"

/** The API's message for a mail refusal: one wording, whichever protocol meets it. */
const apiMessage = (e: MailRefusal): string => Effect.runSync(Effect.flip(mailRefusal(e, WHAT))).message

/** A refusal of the sender or of the quota, at MAIL (suspended, paused) or at the end of DATA. */
export const refusalReply = (e: MailRefusal): Refusal => {
  switch (e._tag) {
    case "AccountSuspended":
    case "SenderDomainNotAuthorized":
      return { code: 550, text: `5.7.1 ${apiMessage(e)}` }
    case "SendingPaused":
      return { code: 451, text: `4.7.1 ${apiMessage(e)}` }
    case "QuotaExhausted":
    case "OverageNotOffered":
      return { code: 452, text: `4.3.1 ${apiMessage(e)}` }
  }
}

export const badKey: Refusal = { code: 535, text: `5.7.8 ${unauthorized().message}` }

export const authRequired: Refusal = {
  code: 530,
  text: "5.7.0 Authentication required: AUTH PLAIN or LOGIN with an API key as the password"
}

export const encryptionRequired: Refusal = {
  code: 538,
  text: "5.7.11 Encryption required: AUTH only after STARTTLS (or on the implicit-TLS port), or from this host's loopback address"
}

export const rateLimited = (limit: number, reset: number): Refusal => ({ code: 451, text: `4.7.1 ${sendRateMessage(limit, reset)}` })

export const tooManyRecipients = (limit: number): Refusal => ({
  code: 452,
  text: `4.5.3 Too many recipients: one message may have at most ${limit}`
})

export const invalidRecipient = (address: string): Refusal => ({
  code: 553,
  text: `5.1.3 to has "${address}", which is not a valid email address (local@domain)`
})

export const blockedRecipient = (domain: string): Refusal => ({ code: 550, text: `5.7.1 recipient domain refused by policy: ${domain}` })

export const tooLarge = (message: string): Refusal => ({ code: 552, text: `5.3.4 ${message}` })

export const idempotencyConflict = (key: string): Refusal => ({
  code: 550,
  text: `5.7.0 ${idempotencyConflictMessage(key)}`
})

export const temporaryFailure: Refusal = { code: 451, text: "4.3.0 Temporary failure, try again later" }

/**
 * The account's part of the body budget is in use (data.ts): 452 4.3.1, "insufficient system
 * storage" (RFC 5321 4.2.2, RFC 3463 X.3.1 "mail system full"): what it is — room in memory for
 * messages being received, full for now and free again as the account's other messages and HTTP
 * bodies are answered — and a transient code, so the client retries the message later. Not
 * 451 4.7.1: that says a policy refused this sender (the rate limit, paused sending), which a
 * client or an operator would look for in the account's settings, not in its load.
 */
export const bodyBudgetFull: Refusal = {
  code: 452,
  text: "4.3.1 Too many message bytes of this account are being received at once (HERALD_HTTP_BODY_BUDGET_MB, HERALD_HTTP_BODY_ACCOUNT_SHARE_PERCENT); try again shortly"
}
