/**
 * The outermost request wrapper: gives each request an id (`X-Request-Id`, and `request_id` on
 * every log line: src/logging.ts reads it from the request's state), refuses bodies over
 * MAX_JSON_MB before reading them (chunked ones while reading them: see chunked-body.ts), turns
 * anything that escaped the API (a defect) into the 500 envelope with its cause logged, adds the
 * headers handlers asked for, and writes one access log line (at debug level).
 *
 * Large bodies are handled a budget at a time (HERALD_HTTP_BODY_BUDGET_MB): a 15 MB send holds its
 * text, the parsed request, the decoded attachments and the stored JSON at once, several times
 * its size, so many of them together could take more memory than the process has. A body over
 * LARGE_BODY takes its size (in MB, at most the whole budget; a chunked one MAX_JSON_MB) from the
 * budget while it is read and handled, and waits while the budget is spent; smaller bodies pass.
 */
import { FileSystem, HttpApp, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Layer, Option } from "effect"
import { randomBase62 } from "../lib/ids.ts"
import { bufferChunkedBody, isChunked } from "./chunked-body.ts"
import { currentRequest, type RequestState } from "./request-context.ts"

const MB = 1_048_576
const LARGE_BODY = MB

const envelope = (status: number, type: string, code: string, message: string) =>
  HttpServerResponse.unsafeJson({ error: { type, code, message } }, { status })

interface Limits {
  readonly maxJsonBytes: number
  /** Permits in MB: what large bodies take while they are handled. */
  readonly budget: Effect.Semaphore
  readonly budgetMb: number
}

/** The MB a body takes from the budget: none up to LARGE_BODY, never more than the whole budget. */
const budgetShare = (request: HttpServerRequest.HttpServerRequest, declared: number, limits: Limits) => {
  const bytes = isChunked(request) ? limits.maxJsonBytes : declared
  return bytes <= LARGE_BODY ? 0 : Math.min(limits.budgetMb, Math.ceil(bytes / MB))
}

/** One request, run with its state (`currentRequest`) set: every line it logs carries its id. */
const handle = <E, R>(app: HttpApp.Default<E, R>, state: RequestState, limits: Limits) =>
  Effect.gen(function*() {
    const { requestId } = state
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = Date.now()
    const { maxJsonBytes } = limits
    const declared = Number(request.headers["content-length"] ?? "0")
    const tooLarge = (message: string) => envelope(413, "invalid_request_error", "payload_too_large", message)
    const read = isChunked(request)
      ? bufferChunkedBody(request, maxJsonBytes).pipe(
        Effect.orDie,
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed(tooLarge(`The request body is over the limit of ${maxJsonBytes} bytes (MAX_JSON_MB)`)),
          onSome: (replay) => Effect.provideService(app, HttpServerRequest.HttpServerRequest, replay)
        }))
      )
      : app
    const share = budgetShare(request, declared, limits)
    const inner = share === 0 ? read : limits.budget.withPermits(share)(read)
    const response = Number.isFinite(declared) && declared > maxJsonBytes
      ? tooLarge(`The request body is ${declared} bytes; the limit is ${maxJsonBytes} bytes (MAX_JSON_MB)`)
      : yield* inner.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("request failed", cause).pipe(
              Effect.as(envelope(500, "api_error", "internal_error", `Internal error (request ${requestId})`))
            ))
      )
    const final = HttpServerResponse.setHeaders(response, { ...state.responseHeaders, "x-request-id": requestId })
    // Built only when debug lines are written: the annotations cost something on every request.
    yield* Effect.whenLogLevel(
      Effect.logDebug("http").pipe(
        Effect.annotateLogs({
          method: request.method,
          path: request.url.split("?")[0] ?? request.url,
          status: final.status,
          ms: Date.now() - started
        })
      ),
      "Debug"
    )
    return final
  })

/**
 * The most any body read through the platform may be (MAX_JSON_MB), for the whole server: one
 * service in the server's context rather than one provided per request (each `provideService`
 * copies the request's context, which holds every service of the appliance).
 */
export const bodyLimitLayer = (maxJsonBytes: number) =>
  Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxJsonBytes)))

export const requestMiddleware = (maxJsonBytes: number, bodyBudgetBytes: number) => {
  const budgetMb = Math.max(1, Math.floor(bodyBudgetBytes / MB))
  const limits: Limits = { maxJsonBytes, budget: Effect.unsafeMakeSemaphore(budgetMb), budgetMb }
  return <E, R>(app: HttpApp.Default<E, R>) =>
    Effect.suspend(() => {
      const state: RequestState = { requestId: `req_${randomBase62(20)}`, responseHeaders: {} }
      return Effect.locally(handle(app, state, limits), currentRequest, state)
    })
}
