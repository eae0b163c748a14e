/**
 * Per-request state that handlers may read or add to without it appearing in their types: the
 * request id (also `X-Request-Id`), and extra response headers such as the RateLimit-* trio, which
 * must be on error responses too and so are added by the server middleware, not by the handler;
 * and the request's place in the body budget, which authentication names the owner of.
 */
import { Effect, FiberRef } from "effect"
import type { BodyOwner } from "./body-budget.ts"

/** The request's place in the body budget (server-middleware.ts), for the body reader. */
export interface RequestBodyBudget {
  /** Whose room the body takes: set by authentication; unset, the client address's (public pages). */
  owner: BodyOwner | undefined
  /** Takes `kb` of the owner's room until the request is answered; once per request. */
  readonly take: (kb: number) => Effect.Effect<void>
}

export interface RequestState {
  readonly requestId: string
  readonly responseHeaders: Record<string, string>
  readonly bodyBudget?: RequestBodyBudget
}

export const currentRequest = FiberRef.unsafeMake<RequestState>({ requestId: "", responseHeaders: {} })

export const requestId: Effect.Effect<string> = Effect.map(FiberRef.get(currentRequest), (s) => s.requestId)

/** Adds headers to whatever response this request ends with (success or error). */
export const setResponseHeaders = (headers: Record<string, string>): Effect.Effect<void> =>
  Effect.map(FiberRef.get(currentRequest), (state) => {
    Object.assign(state.responseHeaders, headers)
  })

/** Bodies this request reads from now on count against `owner`'s room (authentication calls it). */
export const setBodyOwner = (owner: BodyOwner): Effect.Effect<void> =>
  Effect.map(FiberRef.get(currentRequest), (state) => {
    if (state.bodyBudget !== undefined) state.bodyBudget.owner = owner
  })

/** Takes `kb` of the body budget for the rest of the request (body-reader.ts); outside a request, nothing. */
export const takeBodyBudget = (kb: number): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentRequest), (state) => (state.bodyBudget === undefined || kb === 0 ? Effect.void : state.bodyBudget.take(kb)))
