/** POST /v1/mail/send: the transactional send (spec "Transactional send request/response"). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, Forbidden, PayloadTooLarge, RateLimited, SendBadRequest } from "../../http/errors.ts"
import { SendRequestBody } from "../request.ts"

export const SendItem = Schema.Struct({
  personalization_index: Schema.Int,
  status: Schema.Literal("queued", "failed", "skipped", "suppressed", "rejected"),
  message_id: Schema.String.annotations({ description: "Prefixed sandbox- in sandbox mode" }),
  sandbox: Schema.Boolean,
  error: Schema.optional(Schema.String).annotations({ description: "Why the item was not queued" })
}).annotations({ identifier: "SendItem" })
export type SendItem = typeof SendItem.Type

export const SendResponse = Schema.Struct({
  message: Schema.String,
  app: Schema.String.annotations({ description: "The API key's id" }),
  request_id: Schema.String,
  sandbox: Schema.Boolean,
  items: Schema.Array(SendItem),
  id: Schema.optional(Schema.String).annotations({ description: "With send_at: the scheduled send's id" }),
  message_id: Schema.optional(Schema.String).annotations({ description: "Flat form: the message_id of its one item" })
}).annotations({
  identifier: "SendResponse",
  examples: [{
    message: "accepted",
    app: "key_4kR2vX9mQ1sT7wZ0aB3c",
    request_id: "req_8Hn2LpQ5rT1vW6yZ9bC4",
    sandbox: false,
    items: [{ personalization_index: 0, status: "queued", message_id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N", sandbox: false }]
  }]
})
export type SendResponse = typeof SendResponse.Type

/** The longest Idempotency-Key (checked by the handler, so its 400 is the send's own). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200
/** Longer than any of the values that mean sandbox (true, 1, yes, on). */
const MAX_TEST_HEADER_LENGTH = 64

export const SendHeaders = Schema.Struct({
  "x-herald-test": Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_TEST_HEADER_LENGTH))).annotations({
    description: "true, 1, yes or on (any case): sandbox mode — validated exactly like a real send, nothing sent"
  }),
  // The length (at most 200 characters) is checked by the handler, so that its 400 is the send
  // endpoint's own (top-level message, RateLimit-* headers).
  "idempotency-key": Schema.optional(
    Schema.String.pipe(Schema.filter(() => true, { jsonSchema: { maxLength: MAX_IDEMPOTENCY_KEY_LENGTH } }))
  ).annotations({
    description: "At most 200 characters. Replays the stored response of the same key and body for 24 h; " +
      "a different body → 409"
  })
})

export class SendGroup extends HttpApiGroup.make("send")
  .add(
    HttpApiEndpoint.post("send", "/v1/mail/send")
      .setHeaders(SendHeaders)
      .setPayload(SendRequestBody)
      .addSuccess(SendResponse, { status: 202 })
      .addError(SendBadRequest)
      .addError(Forbidden)
      .addError(Conflict)
      .addError(PayloadTooLarge)
      .addError(RateLimited)
      .annotate(
        OpenApi.Description,
        "Queues one message per personalization. The 202 comes after the rows are committed. Every send response " +
          "carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (Unix seconds)."
      )
      .annotate(OpenApi.Summary, "Send an email (full or flat form), now or at send_at; one message per personalization")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Send")
{}
