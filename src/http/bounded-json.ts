/**
 * JSON.parse with bounds on what the parsed value may cost. A body's text is cheap next to what it
 * parses into: 1 MB of `{},` becomes 22 MB of empty objects, 1 MB of `[` nests 500,000 arrays
 * (28 MB), so a 15 MB body could build more than the whole heap. The text is scanned first
 * (no allocation), and only a text within the bounds is handed to JSON.parse.
 *
 * The bounds: nesting at most MAX_JSON_DEPTH levels (the API's bodies nest 4 or 5), and at most
 * `maxJsonNodes(bytes)` values (containers plus their members). The node bound grows with the
 * text (one per 16 bytes, what no real body comes near: a recipient `{"email":"a@example.org"}`
 * is 26 bytes for two) and stops at MAX_JSON_NODES, so the parsed values of any admitted body cost
 * at most about 4 times its text for small bodies and 13 MB for the largest (bench/body-heap.ts).
 */
import { Either } from "effect"
import { unstorableInJson } from "./storable-input.ts"

export const MAX_JSON_DEPTH = 64
export const MAX_JSON_NODES = 200_000

/** The values a text of `bytes` characters may hold. */
export const maxJsonNodes = (bytes: number) => Math.min(MAX_JSON_NODES, 4_096 + Math.floor(bytes / 16))

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const OPEN_BRACKET = 91
const OPEN_BRACE = 123
const CLOSE_BRACKET = 93
const CLOSE_BRACE = 125

/** The index just past the string that opens at `start`, or -1 when it never closes. */
const skipString = (text: string, start: number): number => {
  let at = start + 1
  for (;;) {
    const quote = text.indexOf("\"", at)
    if (quote === -1) return -1
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    at = quote + 1
  }
}

/**
 * Why the text is over the bounds, or undefined. Counts containers and commas (every member but a
 * container's first follows one), skipping strings; syntax is left to JSON.parse.
 */
export const jsonBoundsProblem = (text: string, maxDepth = MAX_JSON_DEPTH, maxNodes = maxJsonNodes(text.length)): string | undefined => {
  let depth = 0
  let nodes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = skipString(text, i)
      if (end === -1) return undefined
      i = end - 1
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > maxDepth) return `The body nests deeper than ${maxDepth} levels`
      if (++nodes > maxNodes) break
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--
    } else if (c === COMMA && ++nodes > maxNodes) {
      break
    }
  }
  return nodes > maxNodes ? `The body holds more than ${maxNodes} JSON values` : undefined
}

export type JsonRejection =
  | { readonly reason: "syntax"; readonly message: string }
  | { readonly reason: "bounds"; readonly message: string }
  | { readonly reason: "unstorable"; readonly message: string; readonly param: string }

/**
 * The parsed text, or why not: over the bounds (checked first), not JSON, or holding a string
 * PostgreSQL cannot store (storable-input.ts: the one place every JSON body is checked for it).
 */
export const parseBoundedJson = (
  text: string,
  maxDepth = MAX_JSON_DEPTH,
  maxNodes = maxJsonNodes(text.length)
): Either.Either<unknown, JsonRejection> => {
  const problem = jsonBoundsProblem(text, maxDepth, maxNodes)
  if (problem !== undefined) return Either.left({ reason: "bounds", message: problem })
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return Either.left({ reason: "syntax", message: `The body is not valid JSON: ${e instanceof Error ? e.message : String(e)}` })
  }
  const unstorable = unstorableInJson(parsed)
  return unstorable === undefined ? Either.right(parsed) : Either.left({ reason: "unstorable", ...unstorable })
}
