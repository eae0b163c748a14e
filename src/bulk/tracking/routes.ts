/**
 * The tracking endpoints on HERALD_TRACK_URL (DESIGN "Public pages and tokens"; no key, GET
 * only, no body, so neither authentication nor the body limits stand in the way):
 *
 * - `GET /o/<token>`: always 200 with a 1×1 transparent GIF and `Cache-Control: no-store` (a cached
 *   pixel would hide the next open), whatever happens: a bad token or a failed recording is
 *   logged and records nothing, and the mail client still gets its image.
 * - `GET /c/<token>`: 302 to the URL of the link the token names (from the campaign's link table,
 *   kept in memory by the recorder; never from the request: no open redirect), `Cache-Control: no-store` so each click reaches us,
 *   and `Referrer-Policy: no-referrer` so the destination never sees the token. A bad token → the
 *   plain 404 page, nothing recorded. If recording fails the person still gets where they wanted.
 *
 * Either answers once its hit is logged (recorder.ts: one group-committed INSERT, no read but a
 * click's first of its campaign); the counting is the aggregator's (aggregator.ts).
 *
 * The handlers are registered on the API's router (every method and path rule holds there: HEAD,
 * 405 for a POST), and the same handlers answer `GET` through the server's front door
 * (src/api/front-door.ts), which skips the router and the API's request middleware: a mail
 * client's pixel needs neither a request id nor a body budget, and on the whole API stack a hit
 * cost more main-thread time than the bare redirect server's whole request (bench/campaign.ts).
 * There, the usual hits do not even reach these handlers: fast-path.ts answers them with plain
 * callbacks, and leaves the rest (a bad click token, a campaign's first click) to these.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Layer, Option } from "effect"
import { invalidLinkPage, publicPage } from "../public/page.ts"
import { PublicTokens } from "../public/tokens.ts"
import { isMachineOpen } from "./machine-opens.ts"
import { TrackingRecorder } from "./recorder.ts"
import { readClickToken, readOpenToken } from "./tokens.ts"

/** The smallest transparent GIF (GIF89a, 1×1, one transparent colour). */
export const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64")

const pixelResponse = () =>
  HttpServerResponse.uint8Array(PIXEL, {
    status: 200,
    contentType: "image/gif",
    headers: { "cache-control": "no-store" }
  })

const redirect = (url: string) =>
  HttpServerResponse.empty({
    status: 302,
    // Normalised by the URL parser: percent-encoded, so the header holds no raw space or non-ASCII byte.
    headers: { location: new URL(url).href, "cache-control": "no-store", "referrer-policy": "no-referrer" }
  })

/**
 * The token: the rest of the path after `/o/` or `/c/`, without a query. Read from the URL, not
 * from a `:token` parameter: the front door has no router, and the router refuses a parameter
 * longer than 100 characters by default (a click token is longer than that).
 */
export const tokenOfPath = (url: string) => {
  const path = url.split("?", 1)[0]!
  return path.slice(path.indexOf("/", 1) + 1)
}

const tokenOf = (request: HttpServerRequest.HttpServerRequest) => tokenOfPath(request.url)

/** The two endpoints' handlers, for the router and the front door. */
export const makeTrackingHandlers = Effect.gen(function*() {
  const tokens = yield* PublicTokens
  const recorder = yield* TrackingRecorder

  const open = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const now = yield* Clock.currentTimeMillis
    const target = readOpenToken(tokens, tokenOf(request), now)
    if (Option.isSome(target)) {
      const machine = isMachineOpen(request.headers["user-agent"])
      yield* recorder.open(target.value, new Date(now), machine).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("open not recorded", cause))
      )
    }
    return pixelResponse()
  }).pipe(Effect.catchAllCause(() => Effect.succeed(pixelResponse())))

  const click = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const now = yield* Clock.currentTimeMillis
    const target = readClickToken(tokens, tokenOf(request), now)
    if (Option.isNone(target)) return invalidLinkPage()
    const url = yield* recorder.linkUrl(target.value)
    if (Option.isNone(url)) return invalidLinkPage()
    yield* recorder.click(target.value, new Date(now)).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("click not recorded", cause))
    )
    return redirect(url.value)
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.logError("click failed", cause).pipe(Effect.as(publicPage({
        title: "Please try again",
        paragraphs: ["This link cannot be followed right now. Please try again in a moment."],
        status: 503
      }))))
  )

  return { open, click } as const
})

/** `/o/…` → open, `/c/…` → click, anything else → undefined (the front door's dispatch). */
export const trackingHandlerFor = (handlers: Effect.Effect.Success<typeof makeTrackingHandlers>, path: string) =>
  path.startsWith("/o/") ? handlers.open : path.startsWith("/c/") ? handlers.click : undefined

export const TrackingRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const handlers = yield* makeTrackingHandlers
    yield* router.get("/o/*", handlers.open)
    yield* router.get("/c/*", handlers.click)
  })
).pipe(Layer.provide(PublicTokens.Default))
