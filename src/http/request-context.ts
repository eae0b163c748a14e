/**
 * Per-request state that handlers may read or add to without it appearing in their types: the
 * request id (also `X-Request-Id`), and extra response headers such as the RateLimit-* trio, which
 * must be on error responses too and so are added by the server middleware, not by the handler.
 */
import { Effect, FiberRef } from "effect"

export interface RequestState {
  readonly requestId: string
  readonly responseHeaders: Record<string, string>
}

export const currentRequest = FiberRef.unsafeMake<RequestState>({ requestId: "", responseHeaders: {} })

export const requestId: Effect.Effect<string> = Effect.map(FiberRef.get(currentRequest), (s) => s.requestId)

/** Adds headers to whatever response this request ends with (success or error). */
export const setResponseHeaders = (headers: Record<string, string>): Effect.Effect<void> =>
  Effect.map(FiberRef.get(currentRequest), (state) => {
    Object.assign(state.responseHeaders, headers)
  })
