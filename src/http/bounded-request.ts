/**
 * The request HttpApi sees on every route but the send: the same request, except that its body is
 * read with body-reader.ts (within HERALD_HTTP_MAX_BODY_KB, at the minimum rate) and its JSON is
 * parsed within bounds (bounded-json.ts). HttpApi reads the body only after the security
 * middleware, so an unauthenticated request's body is never read. A refusal travels as a
 * BodyRejected defect (HttpApi reads bodies with orDie) and becomes its envelope in
 * server-middleware.ts.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { BodyRejected, type BodyReadLimits, readBodyWithin } from "./body-reader.ts"
import { parseBoundedJson } from "./bounded-json.ts"

export const boundedJsonRequest = (
  request: HttpServerRequest.HttpServerRequest,
  limits: BodyReadLimits
): HttpServerRequest.HttpServerRequest => {
  const bytes = Effect.runSync(Effect.cached(readBodyWithin(request, limits)))
  const text = Effect.map(bytes, (body) => body.toString("utf8"))
  const json = Effect.flatMap(text, (body) =>
    parseBoundedJson(body).pipe(
      Effect.mapError((rejection) =>
        rejection.reason === "unstorable"
          ? new BodyRejected({ status: 400, code: "validation_failed", message: rejection.message, param: rejection.param || undefined })
          : new BodyRejected({ status: 400, code: rejection.reason === "bounds" ? "json_too_complex" : "invalid_json", message: rejection.message })
      )
    ))
  // The platform's other readers (urlParamsBody, …) go through `text` on this object too.
  return Object.create(request, {
    text: { get: () => text },
    json: { get: () => json },
    arrayBuffer: {
      get: () => Effect.map(bytes, (body) => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer)
    }
  }) as HttpServerRequest.HttpServerRequest
}
