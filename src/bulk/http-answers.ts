/**
 * Failures every bulk group answers alike (templates, lists' confirmation settings, campaigns,
 * sequence steps): content that does not render, content over the 512 KB bound, and what making
 * mail may meet (`mailingAnswer`).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { BadRequestError, type ForbiddenError, payloadTooLarge, type RateLimitedError, UnavailableError, validationFailed } from "../http/errors.ts"
import { isMailRefusal, type MailRefusal, mailRefusal, rateLimited } from "../transactional/mail-refusals.ts"
import type { AccountMissing } from "../platform/usage/AccountLimits.ts"
import type { MailRateLimited } from "../transactional/send-context.ts"
import type { RenderFailed } from "./render/errors.ts"
import { MAX_TEMPLATE_BYTES } from "./templates/fields.ts"

/**
 * 400 `render_failed`, `param` naming the field, the message giving line and column (DESIGN
 * "Errors"); 400 `validation_failed` for a field over its bound (refused before any work); 503
 * `render_busy` when no render worker could take it (not the content's doing).
 */
export const renderFailedAnswer = (e: RenderFailed): Effect.Effect<never, BadRequestError | UnavailableError> =>
  e.busy === true
    ? Effect.fail(new UnavailableError({ type: "api_error", code: "render_busy", message: e.message }))
    : e.overBound === true
    ? Effect.fail(validationFailed(e.message, e.param))
    : Effect.fail(new BadRequestError({ type: "invalid_request_error", code: "render_failed", message: e.message, param: e.param }))

/** 413 for `what` ("A template's fields together") holding `bytes`, over MAX_TEMPLATE_BYTES. */
export const contentTooLargeAnswer = (what: string, bytes: number) =>
  Effect.fail(payloadTooLarge(`${what} may hold at most ${MAX_TEMPLATE_BYTES} bytes (512 KB); ${bytes} were given`))

/** What a bulk call that makes mail (a test-send, a campaign's send, an enrolment, a confirmation mail) may meet besides its own failures. */
export type MailingFailure = MailRefusal | RenderFailed | MailRateLimited | AccountMissing | SqlError

/**
 * `e` as the API's envelope: the send endpoint's refusals (`what` names the mail in the overage
 * message: "This campaign"), `render_failed`, the sends' rate window; a missing account and SQL
 * errors are defects (500). Each group answers its own failures and hands the rest here.
 */
export const mailingAnswer = (e: MailingFailure, what: string): Effect.Effect<never, BadRequestError | ForbiddenError | RateLimitedError | UnavailableError> => {
  if (isMailRefusal(e)) return mailRefusal(e, what)
  switch (e._tag) {
    case "RenderFailed":
      return renderFailedAnswer(e)
    case "MailRateLimited":
      return rateLimited(e.limit, e.reset)
    case "AccountMissing":
    case "SqlError":
      return Effect.die(e)
  }
}
