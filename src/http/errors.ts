/**
 * The one error envelope of the API: `{"error": {"type", "code", "message", "param"?}}`.
 *
 * Each HTTP status has one error class. Handlers fail with an instance (`new NotFound(...)`);
 * the class's schema is a transformation whose encoded side is the envelope, so the OpenAPI
 * documents show exactly what goes over the wire and no `_tag` leaks into a response body.
 * Types and codes follow the spec's table plus `DESIGN.md` "Rules shared by several issues".
 */
import { HttpApiSchema } from "@effect/platform"
import { Effect, Schema } from "effect"

export const ErrorBody = Schema.Struct({
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  param: Schema.optional(Schema.String)
}).annotations({ identifier: "ErrorBody" })

export const ErrorEnvelope = Schema.Struct({ error: ErrorBody }).annotations({ identifier: "Error" })

const fields = {
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  param: Schema.optional(Schema.String)
}

export interface ErrorFields {
  readonly type: string
  readonly code: string
  readonly message: string
  readonly param?: string | undefined
}

/** Wraps a tagged error class so that it travels as the envelope, with its HTTP status. */
const asEnvelope = <Self extends ErrorFields, I, R>(
  self: Schema.Schema<Self, I, R>,
  make: (body: ErrorFields) => Self,
  status: number,
  description: string
) =>
  Schema.transform(ErrorEnvelope, Schema.typeSchema(self), {
    strict: true,
    decode: (envelope) => make(envelope.error),
    encode: (error) => ({
      error: error.param === undefined
        ? { type: error.type, code: error.code, message: error.message }
        : { type: error.type, code: error.code, message: error.message, param: error.param }
    })
  }).annotations(HttpApiSchema.annotations({ status, description }))

export class BadRequestError extends Schema.TaggedError<BadRequestError>()("BadRequestError", fields) {}
export class UnauthorizedError extends Schema.TaggedError<UnauthorizedError>()("UnauthorizedError", fields) {}
export class ForbiddenError extends Schema.TaggedError<ForbiddenError>()("ForbiddenError", fields) {}
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("NotFoundError", fields) {}
export class ConflictError extends Schema.TaggedError<ConflictError>()("ConflictError", fields) {}
export class PayloadTooLargeError extends Schema.TaggedError<PayloadTooLargeError>()("PayloadTooLargeError", fields) {}
export class UnprocessableError extends Schema.TaggedError<UnprocessableError>()("UnprocessableError", fields) {}
export class RateLimitedError extends Schema.TaggedError<RateLimitedError>()("RateLimitedError", fields) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {}
export class UnavailableError extends Schema.TaggedError<UnavailableError>()("UnavailableError", fields) {}

export const BadRequest = asEnvelope(BadRequestError, (b) => new BadRequestError(b), 400, "Invalid request")
export const Unauthorized = asEnvelope(UnauthorizedError, (b) => new UnauthorizedError(b), 401, "Missing or invalid API key")
export const Forbidden = asEnvelope(ForbiddenError, (b) => new ForbiddenError(b), 403, "Not allowed for this key")
export const NotFound = asEnvelope(NotFoundError, (b) => new NotFoundError(b), 404, "Not found")
export const Conflict = asEnvelope(ConflictError, (b) => new ConflictError(b), 409, "The current state forbids this call")
export const PayloadTooLarge = asEnvelope(
  PayloadTooLargeError,
  (b) => new PayloadTooLargeError(b),
  413,
  "Request body or attachments too large"
)
export const Unprocessable = asEnvelope(UnprocessableError, (b) => new UnprocessableError(b), 422, "Unprocessable")
export const RateLimited = asEnvelope(RateLimitedError, (b) => new RateLimitedError(b), 429, "Rate limit or quota")
export const Internal = asEnvelope(InternalError, (b) => new InternalError(b), 500, "Internal error")
export const Unavailable = asEnvelope(UnavailableError, (b) => new UnavailableError(b), 503, "Service unavailable")

// Constructors for the codes used in more than one place, so type/code pairs never drift.
export const validationFailed = (message: string, param?: string) =>
  new BadRequestError({ type: "invalid_request_error", code: "validation_failed", message, param })
export const invalidJson = (message: string) =>
  new BadRequestError({ type: "invalid_request_error", code: "invalid_json", message })
export const unauthorized = (message = "Missing or invalid API key") =>
  new UnauthorizedError({ type: "authentication_error", code: "unauthorized", message })
export const forbidden = (message: string, code = "forbidden") =>
  new ForbiddenError({ type: "permission_error", code, message })
export const notFound = (message: string) =>
  new NotFoundError({ type: "invalid_request_error", code: "not_found", message })
export const conflict = (message: string, code = "conflict") =>
  new ConflictError({ type: "invalid_request_error", code, message })
export const payloadTooLarge = (message: string, param?: string) =>
  new PayloadTooLargeError({ type: "invalid_request_error", code: "payload_too_large", message, param })
/**
 * 429 for a confirmation mail to an address that had one for the same list in the last 24 h
 * (DESIGN "Errors", Wave 3); the caller sets `Retry-After`.
 */
export const confirmationRecentlySent = (message: string) =>
  new RateLimitedError({ type: "rate_limit_error", code: "confirmation_recently_sent", message })
/** A read that hit its statement timeout (HERALD_QUERY_TIMEOUT_MS): `param` names what to narrow. */
export const queryTooExpensive = (message: string, param?: string) =>
  new UnprocessableError({ type: "invalid_request_error", code: "query_too_expensive", message, param })
/** src/db/statement-timeout.ts's QueryTooExpensive as the API's 422. */
export const answerQueryTooExpensive = (e: { readonly message: string; readonly param: string | undefined }) =>
  Effect.fail(queryTooExpensive(e.message, e.param))
export const internalError = (message = "Internal error") =>
  new InternalError({ type: "api_error", code: "internal_error", message })

/**
 * The send endpoint's 400: the spec shows its invalid-body answer as an object with a top-level
 * `message`, so this envelope carries both that and the usual `error`.
 */
export class SendRequestError extends Schema.TaggedError<SendRequestError>()("SendRequestError", fields) {}

export const SendBadRequest = Schema.transform(
  Schema.Struct({ message: Schema.String, error: ErrorBody }).annotations({ identifier: "SendError" }),
  Schema.typeSchema(SendRequestError),
  {
    strict: true,
    decode: (envelope) => new SendRequestError(envelope.error),
    encode: (e) => ({
      message: e.message,
      error: e.param === undefined
        ? { type: e.type, code: e.code, message: e.message }
        : { type: e.type, code: e.code, message: e.message, param: e.param }
    })
  }
).annotations(HttpApiSchema.annotations({ status: 400, description: "Invalid send request" }))
