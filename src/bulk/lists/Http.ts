import { HttpApiBuilder } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { groupApi } from "../../http/group-api.ts"
import { ListsGroup } from "./Api.ts"
import { mailingAnswer, renderFailedAnswer } from "../http-answers.ts"
import { CurrentKey } from "../../http/auth.ts"
import {
  answerQueryTooExpensive,
  BadRequestError,
  conflict,
  confirmationRecentlySent,
  type ConflictError,
  type ForbiddenError,
  notFound,
  type NotFoundError,
  type RateLimitedError,
  type UnavailableError,
  type UnprocessableError,
  validationFailed
} from "../../http/errors.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import type { AccountMissing } from "../../platform/usage/AccountLimits.ts"
import type { MailRefusal } from "../../transactional/mail-refusals.ts"
import type { MailRateLimited } from "../../transactional/send-context.ts"
import type { RenderFailed } from "../render/errors.ts"
import type { ConfirmationRecentlySent } from "./confirmation-window.ts"
import type { BadConfirmation, BadMember, ListInUse, ListNotFound, MemberNotFound, MemberNotMailable, MemberNotPending } from "./Lists.ts"
import { Lists } from "./Lists.ts"

/** What queuing a confirmation mail may meet: the send path's refusals, the rate window, and its content failing to render. */
export type ConfirmationRefusal = MailRefusal | RenderFailed | AccountMissing | MailRateLimited

/** The confirmation mail's refusals as the API's envelope, as the send and the test-send answer them. */
export const confirmationRefusal = (e: ConfirmationRefusal) => mailingAnswer(e, "The confirmation mail")

type Failure = ListNotFound | MemberNotFound | ListInUse | BadMember | BadConfirmation | RenderFailed | SqlError

/** Every failure of this group as the API's envelope (SQL errors are defects: 500). */
const answer = (e: Failure): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | UnavailableError> => {
  switch (e._tag) {
    case "ListNotFound":
      return Effect.fail(notFound(`No list ${e.id}`))
    case "MemberNotFound":
      return Effect.fail(notFound(`${e.ref} is not a member of list ${e.listId}`))
    case "ListInUse":
      return Effect.fail(conflict(`List ${e.id} is in use: ${e.users.join(", ")}`))
    case "BadMember":
      return Effect.fail(validationFailed(`contacts[${e.index}] (${e.ref}): ${e.message}`, `contacts[${e.index}]`))
    case "BadConfirmation":
      return Effect.fail(validationFailed(e.message, e.param))
    case "RenderFailed":
      return renderFailedAnswer(e)
    case "SqlError":
      return Effect.die(e)
  }
}

/** Adding members may also meet the confirmation mail's refusals. */
const answerAdding = (
  e: Failure | ConfirmationRefusal
): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | ForbiddenError | RateLimitedError | UnavailableError> =>
  e._tag === "ListNotFound" || e._tag === "MemberNotFound" || e._tag === "ListInUse" || e._tag === "BadMember"
    || e._tag === "BadConfirmation" || e._tag === "SqlError" || e._tag === "RenderFailed"
    ? answer(e)
    : confirmationRefusal(e)

/**
 * The resend's own failures: 429 `confirmation_recently_sent` with `Retry-After` (seconds until the
 * address's 24 h for this list end), 409 for a member not pending, 400 `recipient_suppressed`.
 */
const answerResend = (
  e: Failure | ConfirmationRefusal | ConfirmationRecentlySent | MemberNotPending | MemberNotMailable
): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | ForbiddenError | RateLimitedError | UnavailableError> => {
  switch (e._tag) {
    case "ConfirmationRecentlySent":
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const seconds = Math.max(1, Math.ceil((e.nextAt - now) / 1000))
        return Effect.zipRight(
          setResponseHeaders({ "Retry-After": String(seconds) }),
          Effect.fail(confirmationRecentlySent(
            `${e.address} had this list's confirmation mail less than 24 hours ago; the next may go at ${new Date(e.nextAt).toISOString()}`
          ))
        )
      })
    case "MemberNotPending":
      return Effect.fail(conflict(`${e.ref} is not a pending member of list ${e.listId}, or the list does not require confirmation`))
    case "MemberNotMailable":
      return Effect.fail(new BadRequestError({
        type: "invalid_request_error",
        code: "recipient_suppressed",
        message: `${e.email} gets no mail: it is suppressed, on a blocked domain, or its contact is not active`,
        param: "contact"
      }))
    default:
      return answerAdding(e)
  }
}

export const ListsHttpLive = HttpApiBuilder.group(groupApi(ListsGroup), "lists", (handlers) =>
  Effect.gen(function*() {
    const lists = yield* Lists
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => lists.create(me, payload.name)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentKey, (me) => lists.list(me, urlParams.limit, urlParams.offset)).pipe(Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })))
      .handle("removeMany", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => lists.removeMany(me, Array.isArray(payload) ? payload : (payload as { ids: ReadonlyArray<string> }).ids))
          .pipe(Effect.orDie))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => lists.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => lists.rename(me, path.id, payload.name)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => lists.remove(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("confirmation", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => lists.configure(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("previewConfirmation", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => lists.previewConfirmation(me, path.id)).pipe(
          Effect.catchAll((e): Effect.Effect<never, UnprocessableError | BadRequestError | NotFoundError | ConflictError | UnavailableError> =>
            e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e))
        ))
      .handle("addMembers", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => lists.addMembers(me, path.id, payload.contacts)).pipe(Effect.catchAll(answerAdding)))
      .handle("members", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => lists.members(me, path.id, urlParams)).pipe(
          Effect.catchAll((e): Effect.Effect<never, UnprocessableError | BadRequestError | NotFoundError | ConflictError | UnavailableError> =>
            e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e))
        ))
      .handle("resendConfirmation", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => lists.resendConfirmation(me, path.id, path.contact)).pipe(Effect.catchAll(answerResend)))
      .handle("resendConfirmationQueued", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => lists.resendConfirmation(me, path.id, path.contact)).pipe(
          Effect.as({ queued: true as const }),
          Effect.catchAll(answerResend)
        ))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => lists.removeMember(me, path.id, path.contact)).pipe(Effect.catchAll(answer)))
  }))
