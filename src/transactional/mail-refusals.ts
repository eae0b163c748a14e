/**
 * The refusals every mail-producing endpoint answers alike (DESIGN "Which calls count against the
 * per-minute rate limit"; "Quota, suspension and verification after the start"): the send, a
 * template's test-send, a list's confirmation mail, a campaign's send and resume, a sequence's
 * enrolment. One wording and one status per refusal, whichever endpoint meets it.
 */
import { Effect } from "effect"
import type { OverageNotOffered, QuotaExhausted } from "../platform/usage/Quota.ts"
import type { AccountSuspended, SenderDomainNotAuthorized, SendingPaused } from "./accept.ts"
import { BadRequestError, forbidden, ForbiddenError, RateLimitedError } from "../http/errors.ts"

/** DESIGN "Errors": an unauthorized sender domain is invalid_request_error / domain_not_verified, 403. */
const domainNotVerified = (e: SenderDomainNotAuthorized) =>
  new ForbiddenError({
    type: "invalid_request_error",
    code: "domain_not_verified",
    message: e.state === "not_registered"
      ? `The sender domain ${e.domain} is not registered for this account`
      : e.state === "unverified"
      ? `The sender domain ${e.domain} is not verified yet`
      : `The sender domain ${e.domain} lost its verification record and its grace period has ended`
  })

/** The account's sender and quota refusals, by tag (the send endpoint spreads them into its catchTags). */
export const senderRefusals = {
  AccountSuspended: () => Effect.fail(forbidden("This account is suspended", "account_suspended")),
  SendingPaused: (e: SendingPaused) =>
    Effect.fail(forbidden(`Sending is paused for this account: ${e.reason}. An administrator can lift it.`, "sending_paused")),
  SenderDomainNotAuthorized: (e: SenderDomainNotAuthorized) => Effect.fail(domainNotVerified(e)),
  QuotaExhausted: (e: QuotaExhausted) =>
    Effect.fail(new RateLimitedError({
      type: "rate_limit_error",
      code: "monthly_quota_exceeded",
      message: `Monthly quota used up: ${e.used}/${e.quota} emails this period`
    }))
}

export type MailRefusal = AccountSuspended | SendingPaused | SenderDomainNotAuthorized | QuotaExhausted | OverageNotOffered

const MAIL_REFUSALS: ReadonlySet<string> = new Set(["AccountSuspended", "SendingPaused", "SenderDomainNotAuthorized", "QuotaExhausted", "OverageNotOffered"])

export const isMailRefusal = (e: { readonly _tag: string }): e is MailRefusal => MAIL_REFUSALS.has(e._tag)

/** `e` as the API's envelope; `what` names the mail in the overage message ("This test-send"). */
export const mailRefusal = (e: MailRefusal, what: string): Effect.Effect<never, ForbiddenError | RateLimitedError | BadRequestError> => {
  switch (e._tag) {
    case "AccountSuspended":
      return senderRefusals.AccountSuspended()
    case "SendingPaused":
      return senderRefusals.SendingPaused(e)
    case "SenderDomainNotAuthorized":
      return senderRefusals.SenderDomainNotAuthorized(e)
    case "QuotaExhausted":
      return senderRefusals.QuotaExhausted(e)
    case "OverageNotOffered":
      return Effect.fail(new BadRequestError({
        type: "invalid_request_error",
        code: "overage_not_offered",
        message: overageMessage(e, what)
      }))
  }
}

export const overageMessage = (e: OverageNotOffered, what: string) =>
  `${what} needs ${e.requested} emails but only ${Math.max(0, e.quota - e.used)} of the monthly quota (${e.used}/${e.quota} used) remain, and the plan offers no overage`

/** The per-minute rate limit of the bulk calls that produce mail (DESIGN: they share the key's window with sends). */
export const rateLimited = (limit: number, reset: string | number) =>
  Effect.fail(new RateLimitedError({
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    message: `Too many requests: ${limit} per minute (sends, test-sends, campaign sends, enrolments and calls that may queue confirmation mail together); the window resets at ${reset}`
  }))

/** An Idempotency-Key reused with another message (POST /v1/mail/send's 409, a submission's 550 at end of DATA). */
export const idempotencyConflictMessage = (key: string) =>
  `Idempotency-Key ${key} was used with a different body in the last 24 hours`

/** The send's per-minute rate limit (POST /v1/mail/send's 429, a submission's 451 at MAIL). */
export const sendRateMessage = (limit: number, reset: string | number) =>
  `Too many requests: ${limit} sends per minute for this key and as many for all of its account's keys together; the window resets at ${reset}`
