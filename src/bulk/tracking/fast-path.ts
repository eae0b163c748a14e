/**
 * The tracking endpoints' usual hits as plain Node callbacks, for the server's front door
 * (src/api/front-door.ts): an open (valid token or not) and a click whose campaign's links the
 * recorder already keeps. Each is answered exactly as routes.ts answers it — the pixel, the 302 —
 * once its hit is committed (recorder.ts: one group-committed INSERT), with no fiber, no platform
 * request or response object, per hit. Everything else (a click with a bad token, the first click
 * of a campaign whose links must be read, a link whose URL does not parse) is left to routes.ts's
 * Effect handlers: `handle` answers false and writes nothing.
 *
 * Why: through NodeHttpServer's handler a hit cost a fiber, the platform's request and response
 * wrappers and their conversion to Node's, about as much main-thread CPU as the bare redirect
 * server's whole request (bench/campaign.ts; docs/benchmarks.md "Where the time goes").
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Option, Runtime } from "effect"
import { PublicTokens } from "../public/tokens.ts"
import { isMachineOpen } from "./machine-opens.ts"
import { TrackingRecorder } from "./recorder.ts"
import { PIXEL, tokenOfPath } from "./routes.ts"
import { readClickToken, readOpenToken } from "./tokens.ts"

const PIXEL_HEADERS = { "content-type": "image/gif", "content-length": PIXEL.length, "cache-control": "no-store" }

const writePixel = (response: ServerResponse) => {
  response.writeHead(200, PIXEL_HEADERS)
  response.end(PIXEL)
}

/** As routes.ts's `redirect`: `href` is the link's URL as the URL parser normalises it. */
const writeRedirect = (response: ServerResponse, href: string) => {
  response.writeHead(302, { location: href, "cache-control": "no-store", "referrer-policy": "no-referrer" })
  response.end()
}

/** The link's URL as a Location header, or undefined when it does not parse (routes.ts answers that). */
const hrefOf = (url: string): string | undefined => {
  try {
    return new URL(url).href
  } catch {
    return undefined
  }
}

/** `handle(request, response)`: true when it answers the request (a `GET /o/…` or `/c/…`), false when routes.ts must. */
export const makeTrackingFastPath = Effect.gen(function*() {
  const tokens = yield* PublicTokens
  const recorder = yield* TrackingRecorder
  // The window of repeats is decided on this time: Effect's Clock, read without a fiber.
  const clock = yield* Effect.clock
  const runFork = Runtime.runFork(yield* Effect.runtime<never>())
  /** A failed recording is logged (as routes.ts logs it) and the answer goes out all the same. */
  const warnIfFailed = (message: string, exit: Exit.Exit<void, SqlError>) => {
    if (Exit.isFailure(exit)) runFork(Effect.logWarning(message, exit.cause))
  }

  const open = (request: IncomingMessage, response: ServerResponse, token: string, now: number) => {
    const target = readOpenToken(tokens, token, now)
    if (Option.isNone(target)) return writePixel(response)
    recorder.openThen(target.value, new Date(now), isMachineOpen(request.headers["user-agent"]), (exit) => {
      warnIfFailed("open not recorded", exit)
      writePixel(response)
    })
  }

  const click = (response: ServerResponse, token: string, now: number): boolean => {
    const target = readClickToken(tokens, token, now)
    if (Option.isNone(target)) return false
    const url = recorder.knownLinkUrl(target.value)
    const href = url === undefined ? undefined : hrefOf(url)
    if (href === undefined) return false
    recorder.clickThen(target.value, new Date(now), (exit) => {
      warnIfFailed("click not recorded", exit)
      writeRedirect(response, href)
    })
    return true
  }

  const handle = (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = request.url ?? ""
    const now = clock.unsafeCurrentTimeMillis()
    if (path.startsWith("/o/")) {
      open(request, response, tokenOfPath(path), now)
      return true
    }
    return path.startsWith("/c/") && click(response, tokenOfPath(path), now)
  }

  // Called from the server's `emit`: nothing may throw out of it. What throws before answering is
  // the Effect handlers' to answer (and log).
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    try {
      return handle(request, response)
    } catch {
      return response.headersSent
    }
  }
})
