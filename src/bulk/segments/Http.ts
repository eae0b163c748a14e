import { HttpApiBuilder } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { groupApi } from "../../http/group-api.ts"
import { SegmentsGroup } from "./Api.ts"
import { CurrentKey } from "../../http/auth.ts"
import type { QueryTooExpensive } from "../../db/statement-timeout.ts"
import {
  answerQueryTooExpensive,
  type BadRequestError,
  conflict,
  type ConflictError,
  notFound,
  type NotFoundError,
  type UnprocessableError,
  validationFailed
} from "../../http/errors.ts"
import { type SegmentInUse, type SegmentInvalid, type SegmentNotFound, Segments } from "./Segments.ts"

/** Every failure of this group as the API's envelope (SQL errors are defects: 500). */
const answer = (e: SegmentNotFound | SegmentInvalid | SqlError): Effect.Effect<never, NotFoundError | BadRequestError> => {
  switch (e._tag) {
    case "SegmentNotFound":
      return Effect.fail(notFound(`No segment ${e.id}`))
    case "SegmentInvalid":
      return Effect.fail(validationFailed(e.message, e.param))
    case "SqlError":
      return Effect.die(e)
  }
}

/** The preview may also run past HERALD_QUERY_TIMEOUT_MS: 422 naming its rules. */
const answerPreview = (
  e: SegmentNotFound | SegmentInvalid | QueryTooExpensive | SqlError
): Effect.Effect<never, NotFoundError | BadRequestError | UnprocessableError> =>
  e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e)

/** The delete's own failure: a segment a campaign still needs → 409 naming the campaigns. */
const answerRemove = (e: SegmentNotFound | SegmentInUse | SqlError): Effect.Effect<never, NotFoundError | BadRequestError | ConflictError> =>
  e._tag === "SegmentInUse"
    ? Effect.fail(conflict(`The segment ${e.id} is used by ${e.users.join(", ")}: cancel or change them first`))
    : answer(e)

export const SegmentsHttpLive = HttpApiBuilder.group(groupApi(SegmentsGroup), "segments", (handlers) =>
  Effect.gen(function*() {
    const segments = yield* Segments
    return handlers
      .handle("preview", ({ payload }) => Effect.flatMap(CurrentKey, (me) => segments.preview(me, payload)).pipe(Effect.catchAll(answerPreview)))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => segments.create(me, payload)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentKey, (me) => segments.list(me, urlParams.limit, urlParams.offset)).pipe(Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => segments.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => segments.update(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => segments.remove(me, path.id)).pipe(Effect.catchAll(answerRemove)))
  }))
