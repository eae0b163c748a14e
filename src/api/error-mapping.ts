/**
 * Turns what the HTTP machinery itself fails with into the spec's envelope, before the API
 * encodes errors: schema decode failures → 400 validation_failed naming the field, unknown routes
 * → 404, a body that is not JSON → 400 invalid_json, a body over MAX_JSON_MB → 413.
 */
import { HttpApiBuilder, HttpApiError, HttpServerError } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { formatPath } from "../lib/issue-path.ts"
import { HeraldApi } from "./api.ts"
import {
  type BadRequestError,
  invalidJson,
  notFound,
  type NotFoundError,
  payloadTooLarge,
  type PayloadTooLargeError,
  validationFailed
} from "../http/errors.ts"

const describeIssue = (param: string, message: string): string => {
  if (param === "") return message
  if (message === "is missing") return `${param} is required`
  return message.includes(param) ? message : `${param}: ${message}`
}

export const fromDecodeError = (error: HttpApiError.HttpApiDecodeError) => {
  const first = error.issues[0]
  if (first === undefined) return validationFailed(error.message)
  const param = formatPath(first.path)
  return validationFailed(describeIssue(param, first.message), param === "" ? undefined : param)
}

const causeText = (u: unknown): string => {
  if (u instanceof Error) return `${u.name}: ${u.message} ${causeText(u.cause)}`
  if (typeof u === "object" && u !== null && "cause" in u) return causeText(u.cause)
  return u === undefined ? "" : String(u)
}

type MappedError = BadRequestError | NotFoundError | PayloadTooLargeError

/** A failed body read arrives as a defect (HttpApi reads bodies with orDie). */
const fromBodyDefect = (defect: unknown): Option.Option<MappedError> => {
  if (!HttpServerError.isServerError(defect) || defect._tag !== "RequestError") return Option.none()
  const text = causeText(defect.cause)
  if (/SyntaxError|JSON/i.test(text)) return Option.some(invalidJson(`The body is not valid JSON: ${text.replace(/^SyntaxError: /, "").trim()}`))
  if (/max.*(size|bytes)|exceed|too large/i.test(text)) return Option.some(payloadTooLarge("The request body is too large"))
  return Option.none()
}

export const ErrorMappingLive = HttpApiBuilder.middleware(HeraldApi, (app) =>
  Effect.catchAllCause(app, (cause): Effect.Effect<never, MappedError> => {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error: unknown = failure.value
      if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.fail(fromDecodeError(error))
      if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
        return Effect.fail(notFound(`No route for ${error.request.method} ${error.request.url.split("?")[0]}`))
      }
    }
    const defect = Cause.dieOption(cause)
    if (Option.isSome(defect)) {
      const mapped = fromBodyDefect(defect.value)
      if (Option.isSome(mapped)) return Effect.fail(mapped.value)
    }
    return Effect.failCause(cause)
  }))
