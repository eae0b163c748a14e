/**
 * POST /v1/mail/send, as the spec's endpoint section reads: rate limit (headers on every answer),
 * Idempotency-Key length, body (JSON, at most MAX_JSON_MB), field rules, attachment sizes, schedule
 * rules, then acceptance. The raw body is read here (body-reader.ts: within MAX_JSON_MB, at the
 * minimum upload rate, after authentication), parsed within bounds (bounded-json.ts), and its
 * recipients counted (HERALD_MAX_REQUEST_RECIPIENTS, in request.ts with the other counts) before the schema decodes the whole of it. It is read here (not decoded by HttpApi) because the send
 * endpoint's 400 has its own envelope with a top-level message, and the Idempotency-Key compares
 * the exact body. The Idempotency-Key's length is checked here too (not by the header schema), so
 * its 400 carries the same envelope and the RateLimit-* headers.
 */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Either, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { CurrentKey } from "../../http/auth.ts"
import { readBodyWithin } from "../../http/body-reader.ts"
import { parseBoundedJson } from "../../http/bounded-json.ts"
import { groupApi } from "../../http/group-api.ts"
import {
  ConflictError,
  payloadTooLarge,
  type PayloadTooLargeError,
  RateLimitedError,
  SendRequestError
} from "../../http/errors.ts"
import { idempotencyConflictMessage, overageMessage, senderRefusals, sendRateMessage } from "../mail-refusals.ts"
import { requestId, setResponseHeaders } from "../../http/request-context.ts"
import { rateLimitHeaders } from "../../platform/usage/RateLimiter.ts"
import { Accept, acceptedOutcome, recipientAddresses } from "../accept.ts"
import { recordAcceptedSend } from "../../lib/metrics.ts"
import { sendResponseText } from "../Idempotency.ts"
import { checkAttachmentSizes, checkSchedule } from "../limits.ts"
import { canonicalize } from "../normalize.ts"
import { decodeSendRequest } from "../request.ts"
import { MAX_IDEMPOTENCY_KEY_LENGTH, SendGroup } from "./Api.ts"
import { SendContext } from "../send-context.ts"
import { checkSimulatorRecipients } from "../simulator-recipients.ts"

const SANDBOX_VALUES = new Set(["true", "1", "yes", "on"])
export const isSandbox = (header: string | undefined) => header !== undefined && SANDBOX_VALUES.has(header.trim().toLowerCase())

const jsonText = (text: string, status: number) => HttpServerResponse.text(text, { status, contentType: "application/json" })

const invalid = (code: string, message: string, param?: string) =>
  new SendRequestError({ type: "invalid_request_error", code, message, param })

export const SendHttpLive = HttpApiBuilder.group(groupApi(SendGroup), "send", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const accept = yield* Accept
    const sendContext = yield* SendContext
    const bodyLimits = {
      maxBytes: config.maxJsonBytes,
      limitName: "MAX_JSON_MB",
      minBytesPerSecond: config.httpMinUploadBytesPerSecond,
      graceMs: config.httpUploadGraceMs
    }

    /** The body, read and checked in memory; its verdict is given after the rate limit. */
    const readBody = (request: HttpServerRequest.HttpServerRequest, now: Date) =>
      Effect.gen(function*() {
        const bytes = yield* readBodyWithin(request, bodyLimits).pipe(
          Effect.catchTag("BodyRejected", (rejected): Effect.Effect<never, SendRequestError | PayloadTooLargeError> =>
            rejected.status === 413
              ? Effect.fail(payloadTooLarge(rejected.message))
              : rejected.status === 400
              ? Effect.fail(invalid(rejected.code, rejected.message))
              // Too slow: answered (408, connection closed) by the server middleware, at once.
              : Effect.die(rejected))
        )
        const raw = bytes.toString("utf8")
        const parsed = parseBoundedJson(raw)
        if (Either.isLeft(parsed)) {
          const rejection = parsed.left
          if (rejection.reason === "unstorable") return yield* invalid("validation_failed", rejection.message, rejection.param || undefined)
          return yield* invalid(rejection.reason === "bounds" ? "json_too_complex" : "invalid_json", rejection.message)
        }
        const json = parsed.right
        const decoded = decodeSendRequest(json, { maxRequestRecipients: config.maxRequestRecipients })
        if (Either.isLeft(decoded)) return yield* invalid("validation_failed", decoded.left.message, decoded.left.param)
        const noScenario = checkSimulatorRecipients(decoded.right, json)
        if (noScenario !== null) return yield* invalid("validation_failed", noScenario.message, noScenario.param)
        const canonical = canonicalize(decoded.right)
        const tooLarge = checkAttachmentSizes(canonical, {
          maxAttachmentBytes: config.maxAttachmentBytes,
          maxTotalBytes: config.maxTotalAttachmentsBytes
        })
        if (tooLarge !== null) return yield* payloadTooLarge(tooLarge, "attachments")
        const badSchedule = checkSchedule(canonical, now)
        if (badSchedule !== null) return yield* invalid("validation_failed", badSchedule.message, badSchedule.param)
        return { raw, canonical, form: decoded.right.form }
      })

    return handlers.handleRaw("send", ({ headers, request }) =>
      Effect.gen(function*() {
        const me = yield* CurrentKey
        const now = new Date(yield* Clock.currentTimeMillis)
        const body = yield* Effect.either(readBody(request, now))
        // One round trip: the rate window, the limits and (for a valid body) sender and recipients.
        const { limits, rate, sender } = yield* sendContext.read(
          me.keyId,
          me.accountId,
          now,
          Either.isRight(body)
            ? { fromEmail: body.right.canonical.from.email, recipients: recipientAddresses(body.right.canonical) }
            : undefined
        )
        yield* setResponseHeaders(rateLimitHeaders(rate))
        if (!rate.allowed) {
          return yield* new RateLimitedError({
            type: "rate_limit_error",
            code: "rate_limit_exceeded",
            message: sendRateMessage(limits.ratePerMin, rate.reset)
          })
        }

        const idempotencyKey = Option.fromNullable(headers["idempotency-key"])
        if (Option.isSome(idempotencyKey) && idempotencyKey.value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
          return yield* invalid(
            "validation_failed",
            `Idempotency-Key must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (it has ${idempotencyKey.value.length})`,
            "Idempotency-Key"
          )
        }
        if (Either.isLeft(body)) return yield* body.left
        const { canonical, form, raw } = body.right

        const response = yield* accept.accept({
          accountId: me.accountId,
          keyId: me.keyId,
          requestId: yield* requestId,
          now,
          sandbox: isSandbox(headers["x-herald-test"]),
          request: canonical,
          rawBody: raw,
          idempotencyKey,
          maxRecipients: config.maxRecipients,
          form
        }, limits, sender!)
        recordAcceptedSend("api", acceptedOutcome(response), response.items)
        // Written here, not encoded by HttpApi, so that an idempotent replay answers these very bytes.
        return jsonText(sendResponseText(response), 202)
      }).pipe(
        Effect.catchTags({
          IdempotentReplay: (e) => {
            recordAcceptedSend("api", "replayed", [])
            return Effect.succeed(jsonText(String(e.response), e.status))
          },
          IdempotencyConflict: (e) =>
            Effect.fail(new ConflictError({
              type: "idempotency_error",
              code: "idempotency_key_reused",
              message: idempotencyConflictMessage(e.key)
            })),
          ...senderRefusals,
          OverageNotOffered: (e) =>
            Effect.fail(invalid(
              "overage_not_offered",
              overageMessage(e, "This send")
            )),
          AccountMissing: Effect.die,
          SqlError: Effect.die
        })
      ))
  }))
