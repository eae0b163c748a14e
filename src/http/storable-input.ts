/**
 * The one place where input PostgreSQL cannot store is refused (issue 26, finding 8): NUL (U+0000)
 * and lone UTF-16 surrogates (lib/text.ts says why each is unstorable). Each handler checking its
 * own fields let new routes forget one, and a NUL that reached a query answered 500. Here:
 * - every request's path segments and query parameters, before routing (`withStorableUrl`);
 * - every JSON body, as it is parsed (bounded-json.ts calls `unstorableInJson`), which covers the
 *   API's bodies, the send and the JSON import;
 * - a CSV body cannot hold a lone surrogate (UTF-8 decoding replaces invalid bytes), only a NUL
 *   byte, which the import's CSV reader refuses in its first pass over the bytes
 *   (bulk/contacts/csv-read.ts `scanCsv`).
 * Each is a 400 `validation_failed` whose `param` names the field, parameter or path parameter.
 */
import type { HttpApp, HttpRouter } from "@effect/platform"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { formatPath } from "../lib/issue-path.ts"
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from "../lib/text.ts"

export interface UnstorableInput {
  /** The field (`contacts[0].metadata.note`), query parameter or path parameter; "" for the whole body. */
  readonly param: string
  readonly message: string
}

const refusal = (param: string, what = param): UnstorableInput => ({
  param,
  message: what === "" ? `The body ${UNSTORABLE_TEXT_MESSAGE}` : `${what} ${UNSTORABLE_TEXT_MESSAGE}`
})

/**
 * The first string (or object key) of a parsed JSON value that cannot be stored. The walk costs
 * what the parse did: bounded-json.ts has already bounded the value's nodes and depth.
 */
export const unstorableInJson = (value: unknown): UnstorableInput | undefined => {
  const path: Array<string | number> = []
  const walk = (node: unknown): boolean => {
    if (typeof node === "string") return isStorableText(node)
    if (typeof node !== "object" || node === null) return true
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        path.push(i)
        if (!walk(node[i])) return false
        path.pop()
      }
      return true
    }
    for (const key of Object.keys(node)) {
      path.push(key)
      if (!isStorableText(key) || !walk((node as Record<string, unknown>)[key])) return false
      path.pop()
    }
    return true
  }
  if (walk(value)) return undefined
  const param = formatPath(path)
  return refusal(param)
}

interface RoutePattern {
  readonly method: string
  readonly segments: ReadonlyArray<string>
}

const segmentsOf = (path: string): ReadonlyArray<string> => path.split("/").filter((s) => s !== "")

/** The name the routes give to segment `index` of a path of `count` segments (`message_id`), or undefined. */
const parameterName = (routes: ReadonlyArray<RoutePattern>, method: string, given: ReadonlyArray<string>, index: number) => {
  const fits = (r: RoutePattern) =>
    r.segments.every((part, i) => part === "*" || part.startsWith(":") || part === given[i]) &&
    (r.segments.length === given.length || r.segments.at(-1) === "*")
  const candidates = routes.filter(fits)
  const route = candidates.find((r) => r.method === method) ?? candidates[0]
  const part = route?.segments[index]
  return part !== undefined && part.startsWith(":") ? part.slice(1) : undefined
}

const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** Why the request's URL cannot be served as given, or undefined. */
export const unstorableInUrl = (routes: ReadonlyArray<RoutePattern>, method: string, url: string): UnstorableInput | undefined => {
  const queryAt = url.indexOf("?")
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const given = segmentsOf(path)
  for (let i = 0; i < given.length; i++) {
    const segment = decoded(given[i]!)
    if (segment !== undefined && isStorableText(segment)) continue
    const name = parameterName(routes, method, given, i) ?? "path"
    return segment === undefined
      ? { param: name, message: `${name} is not valid percent-encoded UTF-8` }
      : refusal(name)
  }
  if (queryAt === -1) return undefined
  // URLSearchParams decodes as the platform does (invalid UTF-8 becomes U+FFFD, which is storable).
  for (const [name, value] of new URLSearchParams(url.slice(queryAt + 1))) {
    if (!isStorableText(name)) return refusal("query", "A query parameter name")
    if (!isStorableText(value)) return refusal(name)
  }
  return undefined
}

/**
 * Wraps the API's app: a request whose path or query holds what cannot be stored is answered 400
 * before routing, authentication or any handler, so no route can forget it.
 */
export const withStorableUrl = <E, R>(
  routes: Iterable<HttpRouter.Route<unknown, unknown>>,
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> => {
  const patterns: ReadonlyArray<RoutePattern> = [...routes].map((r) => ({ method: r.method, segments: segmentsOf(r.path) }))
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    // The common URL (no escapes) cannot hold either: checked without decoding anything.
    if (!request.url.includes("%") && isStorableText(request.url)) return app
    const problem = unstorableInUrl(patterns, request.method, request.url)
    if (problem === undefined) return app
    return Effect.succeed(HttpServerResponse.unsafeJson({
      error: { type: "invalid_request_error", code: "validation_failed", message: problem.message, param: problem.param }
    }, { status: 400 }))
  })
}
