import { HttpApiBuilder } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { groupApi } from "../../http/group-api.ts"
import { SequencesGroup } from "./Api.ts"
import type { MailRateLimited } from "../../transactional/send-context.ts"
import { contentTooLargeAnswer, renderFailedAnswer } from "../http-answers.ts"
import { rateLimited } from "../../transactional/mail-refusals.ts"
import { CurrentKey } from "../../http/auth.ts"
import type { QueryTooExpensive } from "../../db/statement-timeout.ts"
import {
  answerQueryTooExpensive,
  BadRequestError,
  conflict,
  type ConflictError,
  notFound,
  type NotFoundError,
  type PayloadTooLargeError,
  RateLimitedError,
  validationFailed,
  type UnavailableError,
  type UnprocessableError
} from "../../http/errors.ts"
import type { RenderFailed } from "../render/errors.ts"
import { Enroll, type EnrollListNotFound, type EnrollSegmentNotFound } from "./Enroll.ts"
import type { SequenceConflict, SequenceInvalid, SequenceNotFound, StepNotFound, SubscriptionNotFound } from "./records.ts"
import { Sequences } from "./Sequences.ts"
import type { StepIncomplete, StepTooLarge } from "./step-content.ts"
import { Steps } from "./Steps.ts"

type Failure =
  | SequenceNotFound
  | StepNotFound
  | SubscriptionNotFound
  | SequenceConflict
  | SequenceInvalid
  | StepIncomplete
  | StepTooLarge
  | RenderFailed
  | EnrollListNotFound
  | EnrollSegmentNotFound
  | MailRateLimited
  | SqlError

/** Every failure of this group as the API's envelope (SQL errors are defects: 500). */
const answer = (e: Failure): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | RateLimitedError | UnavailableError> => {
  switch (e._tag) {
    case "SequenceNotFound":
      return Effect.fail(notFound(`No sequence ${e.id}`))
    case "StepNotFound":
      return Effect.fail(notFound(`Sequence ${e.id} has no step ${e.stepId}`))
    case "SubscriptionNotFound":
      return Effect.fail(notFound(`Sequence ${e.id} has no subscription ${e.subscriptionId}`))
    case "EnrollListNotFound":
      return Effect.fail(notFound(`No list ${e.id}`))
    case "EnrollSegmentNotFound":
      return Effect.fail(notFound(`No segment ${e.id}`))
    case "SequenceConflict":
      return Effect.fail(conflict(e.message))
    case "SequenceInvalid":
    case "StepIncomplete":
      return Effect.fail(validationFailed(e.message, e.param))
    case "StepTooLarge":
      return contentTooLargeAnswer("A step's own fields together", e.bytes)
    case "RenderFailed":
      return renderFailedAnswer(e)
    case "MailRateLimited":
      return rateLimited(e.limit, e.reset)
    case "SqlError":
      return Effect.die(e)
  }
}

/** Enrolment's statements run under HERALD_QUERY_TIMEOUT_MS (a list too large to classify in time): 422. */
const answerEnroll = (
  e: Failure | QueryTooExpensive
): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | RateLimitedError | UnavailableError | UnprocessableError> =>
  e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e)

export const SequencesHttpLive = HttpApiBuilder.group(groupApi(SequencesGroup), "sequences", (handlers) =>
  Effect.gen(function*() {
    const sequences = yield* Sequences
    const steps = yield* Steps
    const enroll = yield* Enroll
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => sequences.create(me, payload)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentKey, (me) => sequences.list(me, urlParams.limit, urlParams.offset)).pipe(Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => sequences.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => sequences.update(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => sequences.remove(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("createStep", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => steps.create(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("steps", ({ path }) => Effect.flatMap(CurrentKey, (me) => steps.list(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("order", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => steps.reorder(me, path.id, payload.order)).pipe(Effect.catchAll(answer)))
      .handle("readStep", ({ path }) => Effect.flatMap(CurrentKey, (me) => steps.read(me, path.id, path.step_id)).pipe(Effect.catchAll(answer)))
      .handle("updateStep", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => steps.update(me, path.id, path.step_id, payload)).pipe(Effect.catchAll(answer)))
      .handle("removeStep", ({ path }) => Effect.flatMap(CurrentKey, (me) => steps.remove(me, path.id, path.step_id)).pipe(Effect.catchAll(answer)))
      .handle("enroll", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => enroll.enroll(me, path.id, payload)).pipe(
          Effect.catchAll(answerEnroll)
        ))
      .handle("subscriptions", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => sequences.subscriptions(me, path.id, urlParams)).pipe(Effect.catchAll(answer)))
      .handle("pause", ({ path }) => Effect.flatMap(CurrentKey, (me) => sequences.pause(me, path.id, path.subscription_id)).pipe(Effect.catchAll(answer)))
      .handle("resume", ({ path }) => Effect.flatMap(CurrentKey, (me) => sequences.resume(me, path.id, path.subscription_id)).pipe(Effect.catchAll(answer)))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentKey, (me) => sequences.cancel(me, path.id, path.subscription_id)).pipe(Effect.catchAll(answer)))
  }))
