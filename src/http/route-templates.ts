/**
 * A request's route template (`/v1/bulk/campaigns/:id`), for the HTTP metrics' `route` label: the
 * raw path would make a series per id, token or address. Built once from the router's own routes;
 * a path no route has is `UNMATCHED_ROUTE`, one label for every scanner's guess.
 *
 * A tree of path segments: a literal child before the parameter child (as the router prefers
 * `/contacts/import` to `/contacts/:id`), `*` taking the rest. A lookup walks the segments of the
 * path once (no regular expressions, no per-route scan): a few hundred nanoseconds a request.
 */

/** The label of a path that matches no route. */
export const UNMATCHED_ROUTE = "unmatched"

interface Node {
  readonly literal: Map<string, Node>
  param: Node | undefined
  /** A route ends here. */
  template: string | undefined
  /** A `*` route ends here: it takes whatever follows. */
  rest: string | undefined
}

const node = (): Node => ({ literal: new Map(), param: undefined, template: undefined, rest: undefined })

const segmentsOf = (path: string): Array<string> => path.split("/").filter((s) => s !== "")

const find = (at: Node, segments: ReadonlyArray<string>, i: number): string | undefined => {
  if (i === segments.length) return at.template ?? at.rest
  const literal = at.literal.get(segments[i]!)
  const viaLiteral = literal === undefined ? undefined : find(literal, segments, i + 1)
  if (viaLiteral !== undefined) return viaLiteral
  const viaParam = at.param === undefined ? undefined : find(at.param, segments, i + 1)
  return viaParam ?? at.rest
}

/** The route templates of `routes`, and the lookup of a request URL's (its query left out). */
export const makeRouteTemplates = (routes: Iterable<{ readonly path: string }>) => {
  const root = node()
  for (const { path } of routes) {
    let at = root
    for (const segment of segmentsOf(path)) {
      if (segment === "*") {
        at.rest = path
        break
      }
      if (segment.startsWith(":")) at = at.param ??= node()
      else {
        let next = at.literal.get(segment)
        if (next === undefined) at.literal.set(segment, next = node())
        at = next
      }
    }
    if (!path.endsWith("*")) at.template ??= path
  }
  // Most requests hit a path without parameters (the send, /health): found by one map lookup.
  const exact = new Map<string, string>()
  return (url: string): string => {
    const q = url.indexOf("?")
    const path = q === -1 ? url : url.slice(0, q)
    const known = exact.get(path)
    if (known !== undefined) return known
    const found = find(root, segmentsOf(path), 0) ?? UNMATCHED_ROUTE
    // Only templates without parameters are remembered by path: a map of every id seen would grow without bound.
    if (found === path && exact.size < 1_000) exact.set(path, found)
    return found
  }
}
