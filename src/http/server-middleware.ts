/**
 * The outermost request wrapper: gives each request an id (`X-Request-Id`, and `request_id` on
 * every log line: src/logging.ts reads it from the request's state), refuses bodies over their
 * route's limit before reading them (MAX_JSON_MB for the send, HERALD_HTTP_MAX_BODY_KB for every
 * other route), turns anything that escaped the API (a defect) into the 500 envelope with its
 * cause logged, adds the headers handlers asked for, and writes one access log line (debug level).
 *
 * Bodies are read after authentication, where the API asks for them (body-reader.ts: within the
 * limit, at a minimum rate), and other routes' JSON is parsed within bounds (bounded-json.ts).
 *
 * Bodies are handled a budget at a time (HERALD_HTTP_BODY_BUDGET_MB, body-budget.ts): a body over
 * SMALL_BODY takes its room when it starts to be read (body-reader.ts), after authentication has
 * named whose room it is (its key and account; a public page's: its client address), and gives it
 * back when the request is answered.
 */
import { FileSystem, HttpApp, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Exit, Layer, Option, Scope } from "effect"
import { randomBase62 } from "../lib/ids.ts"
import { recordHttpRequest } from "../lib/metrics.ts"
import type { BodyBudget } from "./body-budget.ts"
import { BodyRejected, type BodyReadLimits, isChunked } from "./body-reader.ts"
import { boundedJsonRequest } from "./bounded-request.ts"
import { currentRequest, type RequestBodyBudget, type RequestState } from "./request-context.ts"

export interface BodyPolicy {
  readonly maxJsonBytes: number
  readonly maxBodyBytes: number
  readonly minBytesPerSecond: number
  readonly graceMs: number
}

const envelope = (status: number, type: string, code: string, message: string, param?: string) =>
  HttpServerResponse.unsafeJson({ error: param === undefined ? { type, code, message } : { type, code, message, param } }, { status })

/**
 * The routes whose body may be MAX_JSON_MB (every other route: HERALD_HTTP_MAX_BODY_KB), and
 * whether their handler reads the body itself rather than through HttpApi's JSON reader: the send
 * (send/Http.ts: a bounded parse, counts before decoding) and the contact import (bulk/contacts:
 * a CSV body streamed into its parser).
 */
const LARGE_BODY_ROUTES: ReadonlyArray<{ readonly path: string; readonly readsOwnBody: boolean }> = [
  { path: "/v1/mail/send", readsOwnBody: true },
  { path: "/v1/bulk/contacts/import", readsOwnBody: true },
  { path: "/v1/bulk/contacts/import-preview", readsOwnBody: false }
]

const largeBodyRoute = (request: HttpServerRequest.HttpServerRequest) => {
  if (request.method !== "POST") return undefined
  const path = request.url.split("?", 1)[0]
  return LARGE_BODY_ROUTES.find((route) => route.path === path)
}

const readsOwnBody = (request: HttpServerRequest.HttpServerRequest) => largeBodyRoute(request)?.readsOwnBody === true

/** The read limits of `request`'s route. */
const bodyLimitsFor = (request: HttpServerRequest.HttpServerRequest, policy: BodyPolicy): BodyReadLimits =>
  largeBodyRoute(request) !== undefined
    ? { maxBytes: policy.maxJsonBytes, limitName: "MAX_JSON_MB", minBytesPerSecond: policy.minBytesPerSecond, graceMs: policy.graceMs }
    : { maxBytes: policy.maxBodyBytes, limitName: "HERALD_HTTP_MAX_BODY_KB", minBytesPerSecond: policy.minBytesPerSecond, graceMs: policy.graceMs }

/**
 * A request's place in the body budget: its room is taken once, by the first body read, for the
 * owner authentication named (or the client address), and given back by `release` when the request
 * is answered (or abandoned: an interrupted wait takes nothing).
 */
const requestBodyBudget = (budget: BodyBudget, address: string) => {
  let scope: Scope.CloseableScope | undefined
  const slot: RequestBodyBudget = {
    owner: undefined,
    take: (kb) =>
      Effect.suspend(() =>
        scope !== undefined
          ? Effect.void
          : Effect.flatMap(Scope.make(), (opened) => {
            scope = opened
            return Scope.extend(budget.hold(slot.owner ?? { _tag: "Public", address }, kb), opened)
          })
      )
  }
  const release = Effect.suspend(() => (scope === undefined ? Effect.void : Scope.close(scope, Exit.void)))
  return { slot, release }
}

/** A body refusal found in a cause (HttpApi reads bodies with orDie, so it arrives as a defect). */
const bodyRejection = (cause: Cause.Cause<unknown>): Option.Option<BodyRejected> => {
  const unwrap = (u: unknown, depth: number): BodyRejected | undefined =>
    u instanceof BodyRejected
      ? u
      : depth > 0 && typeof u === "object" && u !== null && "cause" in u
      ? unwrap(u.cause, depth - 1)
      : undefined
  for (const defect of Cause.defects(cause)) {
    const found = unwrap(defect, 3)
    if (found !== undefined) return Option.some(found)
  }
  return Option.flatMap(Cause.failureOption(cause), (failure) => Option.fromNullable(unwrap(failure, 3)))
}

const rejectionResponse = (rejected: BodyRejected) => {
  const response = envelope(rejected.status, "invalid_request_error", rejected.code, rejected.message, rejected.param)
  // A dropped upload is not drained: the connection goes with the answer.
  return rejected.status === 408 ? HttpServerResponse.setHeader(response, "connection", "close") : response
}

/** One request, run with its state (`currentRequest`) set: every line it logs carries its id. */
const handle = <E, R>(
  app: HttpApp.Default<E, R>,
  state: RequestState,
  policy: BodyPolicy,
  release: Effect.Effect<void>,
  routeOf: (url: string) => string
) =>
  Effect.gen(function*() {
    const { requestId } = state
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = performance.now()
    const limits = bodyLimitsFor(request, policy)
    const declared = Number(request.headers["content-length"] ?? "0")
    const hasBody = isChunked(request) || declared > 0
    // Other routes' bodies are read and parsed by HttpApi: give it a request that reads within bounds.
    const run = hasBody && !readsOwnBody(request)
      ? Effect.provideService(app, HttpServerRequest.HttpServerRequest, boundedJsonRequest(request, limits))
      : app
    // The room a body read took (body-reader.ts) goes back when the request is answered.
    const inner = hasBody ? Effect.ensuring(run, release) : run
    const response = Number.isFinite(declared) && declared > limits.maxBytes
      ? envelope(
        413,
        "invalid_request_error",
        "payload_too_large",
        `The request body is ${declared} bytes; the limit is ${limits.maxBytes} bytes (${limits.limitName})`
      )
      : yield* inner.pipe(
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          const rejected = bodyRejection(cause)
          if (Option.isSome(rejected)) return Effect.succeed(rejectionResponse(rejected.value))
          return Effect.logError("request failed", cause).pipe(
            Effect.as(envelope(500, "api_error", "internal_error", `Internal error (request ${requestId})`))
          )
        })
      )
    const final = HttpServerResponse.setHeaders(response, { ...state.responseHeaders, "x-request-id": requestId })
    // Until the response is ready to be written (a streamed export's rows go after): the handler's time.
    const ms = performance.now() - started
    recordHttpRequest(request.method, routeOf(request.url), final.status, ms / 1000)
    // Built only when debug lines are written: the annotations cost something on every request.
    yield* Effect.whenLogLevel(
      Effect.logDebug("http").pipe(
        Effect.annotateLogs({
          method: request.method,
          path: request.url.split("?")[0] ?? request.url,
          status: final.status,
          ms: Math.round(ms)
        })
      ),
      "Debug"
    )
    return final
  })

/**
 * The most any body read through the platform's own readers may be (HERALD_HTTP_MAX_BODY_KB), for
 * the whole server: one service in the server's context rather than one provided per request (each
 * `provideService` copies the request's context, which holds every service of the appliance). The
 * send reads its larger body with body-reader.ts.
 */
export const bodyLimitLayer = (maxBodyBytes: number) =>
  Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxBodyBytes)))

/**
 * `routeOf` names a request's route template for the HTTP metrics (route-templates.ts): never the
 * raw path. `budget` is the process's one body budget (BodyBudgetService), shared with SMTP submission.
 */
export const requestMiddleware = (policy: BodyPolicy, routeOf: (url: string) => string, budget: BodyBudget) =>
  <E, R>(app: HttpApp.Default<E, R>) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const address = Option.getOrElse(request.remoteAddress, () => "unknown")
      const { release, slot } = requestBodyBudget(budget, address)
      const state: RequestState = { requestId: `req_${randomBase62(20)}`, responseHeaders: {}, bodyBudget: slot }
      return Effect.locally(handle(app, state, policy, release, routeOf), currentRequest, state)
    })
