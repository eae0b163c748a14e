/**
 * 405 for a path that exists under other methods (`DELETE /v1/mail/send`): `method_not_allowed`
 * with `Allow` listing them (RFC 9110 §15.5.6), where the router alone would say 404 and leave the
 * client guessing whether the path is misspelt. Answered before authentication: which methods a
 * path serves is in the public OpenAPI documents anyway.
 *
 * The router keeps one tree per method, so a request its method's tree does not match is checked
 * here against every route's path: `:name` matches one segment, `*` the rest, and a trailing slash
 * is ignored, as the router does.
 */
import type { HttpApp, HttpRouter } from "@effect/platform"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"

interface RoutePattern {
  readonly method: string
  readonly segments: ReadonlyArray<string>
}

const segmentsOf = (path: string): ReadonlyArray<string> => path.split("/").filter((s) => s !== "")

const matches = (pattern: ReadonlyArray<string>, path: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i]!
    if (part === "*") return true
    const given = path[i]
    if (given === undefined) return false
    if (!part.startsWith(":") && part !== given) return false
  }
  return pattern.length === path.length
}

/** The methods the routes serve at `path`, HEAD beside GET; empty when no route has the path. */
export const allowedMethods = (routes: ReadonlyArray<RoutePattern>, path: string): ReadonlyArray<string> => {
  const given = segmentsOf(path)
  const methods = new Set(routes.filter((r) => matches(r.segments, given)).map((r) => r.method))
  if (methods.has("GET")) methods.add("HEAD")
  return [...methods].sort()
}

/** Wraps the API's app: a request whose method the path does not serve gets the 405 envelope. */
export const withMethodNotAllowed = <E, R>(
  routes: Iterable<HttpRouter.Route<unknown, unknown>>,
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> => {
  const patterns: ReadonlyArray<RoutePattern> = [...routes].map((r) => ({ method: r.method, segments: segmentsOf(r.path) }))
  // A route for every method (`*`) serves every path it matches: nothing to refuse there.
  const anyMethod = patterns.filter((p) => p.method === "*")
  const verdictOf = (path: string) => ({ allowed: allowedMethods(patterns, path), anyMethod: allowedMethods(anyMethod, path).length > 0 })
  // The routes' own fixed paths (`/v1/mail/send`), decided once: matching every route's pattern
  // cost each request on them (the send among them) a scan of ~150 routes. Others are decided as they come.
  const fixed = new Map(patterns.filter((p) => p.segments.every((s) => s !== "*" && !s.startsWith(":")))
    .map((p) => `/${p.segments.join("/")}`).map((path) => [path, verdictOf(path)] as const))
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const path = request.url.split("?")[0] ?? request.url
    const verdict = fixed.get(path) ?? verdictOf(path)
    const { allowed } = verdict
    if (allowed.length === 0 || allowed.includes(request.method) || verdict.anyMethod) return app
    return Effect.succeed(
      HttpServerResponse.unsafeJson({
        error: {
          type: "invalid_request_error",
          code: "method_not_allowed",
          message: `${request.method} is not allowed on ${path}; it answers ${allowed.join(", ")}`
        }
      }, { status: 405, headers: { allow: allowed.join(", ") } })
    )
  })
}
