/**
 * Reads a request body, declared (`Content-Length`) or not (`Transfer-Encoding: chunked`, RFC 9112
 * §7.1), within a size limit and at a minimum rate. Used by the send handler for its raw body and
 * by the request wrapper of the other routes (server-middleware.ts), after authentication: an
 * unauthenticated request's body is never read.
 *
 * Why not the platform's reader: past its limit it destroys the request stream, which destroys the
 * socket while the client is still sending, so the client gets a reset instead of the 413. Here,
 * past the limit, the data is dropped but the socket keeps being drained, so the 413 arrives and
 * the connection stays usable. Every body read here first takes its room in the body budget
 * (body-budget.ts), so no route reads a large body outside it. And the platform's reader has no
 * notion of rate: an upload that trickles holds its
 * share of the body budget for as long as Node's `requestTimeout` (5 minutes) lets it; here one
 * slower than `minBytesPerSecond` on average, once `graceMs` has passed, is dropped (408, and the
 * connection is closed rather than drained).
 */
import type { IncomingMessage } from "node:http"
import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Data, Effect } from "effect"
import { budgetKb } from "./body-budget.ts"
import { takeBodyBudget } from "./request-context.ts"

/** True when the request carries a body of undeclared length. */
export const isChunked = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["content-length"] === undefined && request.headers["transfer-encoding"] !== undefined

/** A body refused while it was read or parsed; `status` and `code` are its answer (server-middleware.ts). */
export class BodyRejected extends Data.TaggedError("BodyRejected")<{
  readonly status: 400 | 408 | 413
  readonly code: "payload_too_large" | "upload_too_slow" | "invalid_json" | "json_too_complex" | "validation_failed"
  readonly message: string
  /** The field a 400 `validation_failed` names. */
  readonly param?: string | undefined
}> {}

export interface BodyReadLimits {
  readonly maxBytes: number
  /** The limit's name for the 413's message (MAX_JSON_MB, HERALD_HTTP_MAX_BODY_KB). */
  readonly limitName: string
  readonly minBytesPerSecond: number
  readonly graceMs: number
}

/** How often a stalled upload (no data at all) is checked. */
const RATE_CHECK_MS = 250

const readStream = (source: IncomingMessage, limits: BodyReadLimits, now: () => number) =>
  Effect.async<Buffer, BodyRejected>((resume) => {
    const chunks: Array<Buffer> = []
    const started = now()
    let size = 0
    const detach = () => {
      clearInterval(timer)
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const finish = (result: Effect.Effect<Buffer, BodyRejected>) => {
      detach()
      resume(result)
    }
    const tooSlow = () => {
      const elapsed = now() - started
      return limits.minBytesPerSecond > 0 && elapsed > limits.graceMs && size < (limits.minBytesPerSecond * elapsed) / 1000
    }
    const dropSlow = () => {
      const seconds = ((now() - started) / 1000).toFixed(1)
      // Paused, not drained: the 408 goes with `Connection: close` and the socket is ended.
      source.pause()
      finish(Effect.fail(
        new BodyRejected({
          status: 408,
          code: "upload_too_slow",
          message: `The request body arrived too slowly (${size} bytes in ${seconds} s; the minimum is ${limits.minBytesPerSecond} bytes per second, HERALD_HTTP_MIN_UPLOAD_KBPS)`
        })
      ))
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size > limits.maxBytes) {
        // Flowing with no listener: Node reads and discards the rest of the body.
        finish(Effect.fail(
          new BodyRejected({
            status: 413,
            code: "payload_too_large",
            message: `The request body is over the limit of ${limits.maxBytes} bytes (${limits.limitName})`
          })
        ))
        source.resume()
        return
      }
      chunks.push(chunk)
      if (tooSlow()) dropSlow()
    }
    function onEnd() {
      finish(Effect.succeed(Buffer.concat(chunks, size)))
    }
    function onError(error: Error) {
      finish(Effect.fail(new BodyRejected({ status: 400, code: "invalid_json", message: `The request body could not be read: ${error.message}` })))
    }
    const timer = setInterval(() => {
      if (tooSlow()) dropSlow()
    }, RATE_CHECK_MS)
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(detach)
  })

/** The whole body of `request` within `limits`. */
export const readBodyWithin = (request: HttpServerRequest.HttpServerRequest, limits: BodyReadLimits) =>
  Effect.flatMap(Clock.clockWith(Effect.succeed), (clock) => {
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      return Effect.fail(
        new BodyRejected({
          status: 413,
          code: "payload_too_large",
          message: `The request body is ${declared} bytes; the limit is ${limits.maxBytes} bytes (${limits.limitName})`
        })
      )
    }
    // Room in the body budget first (body-budget.ts): as much as this read may bring, taken only
    // now that the owner is known (after authentication), and held until the request is answered.
    const mayBring = isChunked(request) ? limits.maxBytes : Math.min(Number.isFinite(declared) ? declared : 0, limits.maxBytes)
    return Effect.zipRight(
      takeBodyBudget(budgetKb(mayBring)),
      readStream(NodeHttpServerRequest.toIncomingMessage(request), limits, () => clock.unsafeCurrentTimeMillis())
    )
  })
