/**
 * The HTTP server's front door: `GET /o/…` and `GET /c/…` (the tracking pixel and click redirect)
 * go straight to their handlers (src/bulk/tracking/routes.ts), as their own small Effect app,
 * without the API's router, method check and request middleware; every other request goes on to
 * the API as before. The same handlers are on the API's router too, for every other method.
 *
 * Why: these two are the hot public endpoints (every open and click of every campaign), and
 * through the whole API stack — a fiber through the middleware, the 150-route method check, the
 * router, a context copy per layer — a hit cost about 0.5 ms of the main thread, two and a half
 * times the bare redirect server's whole request (docs/benchmarks.md, bench/campaign.ts).
 *
 * Node's server has one `request` event for all listeners, and the platform's `serve` adds its
 * own; `FrontDoorServer` answers a front-door request before that event is emitted.
 */
import { type IncomingMessage, Server, type ServerResponse } from "node:http"
import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import { makeTrackingFastPath } from "../bulk/tracking/fast-path.ts"
import { makeTrackingHandlers, trackingHandlerFor } from "../bulk/tracking/routes.ts"
import { isSupervisedWorker } from "../config/process-share.ts"

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void

/**
 * The server listens (NodeHttpServer's layer) before the API's handler is attached (`serve`, once
 * every other layer is built, seconds later at start-up); Node drops a request no listener takes,
 * and its client waits for good. A health check or a load balancer's probe in that window gets
 * this 503 instead, and asks again.
 */
const STARTING_BODY = JSON.stringify({
  error: { type: "api_error", code: "starting", message: "Herald is starting; try again in a moment" }
})

const answerStarting = (response: ServerResponse) => {
  response.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(STARTING_BODY),
    "retry-after": "1",
    connection: "close"
  })
  response.end(STARTING_BODY)
}

/**
 * A worker of the supervisor (HERALD_PROCESSES > 1) shares the listening socket with its
 * siblings, and node:cluster hands it connections as soon as it listens: a worker started again
 * after a crash would answer "starting" while the others serve. It holds those requests instead,
 * up to this many, and hands them to the API once it is attached (seconds later); past it, 503.
 */
const MAX_HELD_WHILE_STARTING = 256

export class FrontDoorServer extends Server {
  /** Answers the request and returns true, or returns false: the request is the API's. */
  frontDoor: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined
  private readonly held: Array<[IncomingMessage, ServerResponse]> = []

  constructor(private readonly holdWhileStarting = isSupervisedWorker()) {
    super()
    this.on("newListener", (event) => {
      if (event !== "request" || this.held.length === 0) return
      // After the listener is added (newListener comes before).
      setImmediate(() => {
        for (const [request, response] of this.held.splice(0)) this.emit("request", request, response)
      })
    })
  }

  override emit(event: string, ...args: Array<unknown>): boolean {
    if (event !== "request") return super.emit(event, ...args)
    if (this.frontDoor?.(args[0] as IncomingMessage, args[1] as ServerResponse) === true) return true
    if (this.listenerCount("request") === 0) {
      if (this.holdWhileStarting && this.held.length < MAX_HELD_WHILE_STARTING) this.held.push([args[0] as IncomingMessage, args[1] as ServerResponse])
      else answerStarting(args[1] as ServerResponse)
      return true
    }
    return super.emit(event, ...args)
  }
}

/**
 * A bodiless `GET` of a tracking path. A request with a body (a `GET` may declare one) goes to the
 * API, whose request middleware refuses what is over its limit before reading a byte.
 */
const isFrontDoorRequest = (request: IncomingMessage): boolean =>
  request.method === "GET" && request.url !== undefined && (request.url.startsWith("/o/") || request.url.startsWith("/c/")) &&
  request.headers["transfer-encoding"] === undefined && (request.headers["content-length"] ?? "0") === "0"

/**
 * The front door's dispatch for `server`: the tracking handlers as a Node handler (no request
 * span: tracing is off, see src/appliance.ts), installed until the scope closes.
 */
export const openFrontDoor = (server: FrontDoorServer) =>
  Effect.gen(function*() {
    const handlers = yield* makeTrackingHandlers
    // The usual hits, without a fiber each; what it leaves (it answers false) goes to the handlers.
    const fast = yield* makeTrackingFastPath
    const app = Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => trackingHandlerFor(handlers, request.url) ?? Effect.succeed(HttpServerResponse.empty({ status: 404 }))
    )
    const handle: NodeHandler = yield* HttpMiddleware.withTracerDisabledWhenEffect(NodeHttpServer.makeHandler(app), () => true)
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        server.frontDoor = (request, response) => {
          if (!isFrontDoorRequest(request)) return false
          if (!fast(request, response)) handle(request, response)
          return true
        }
      }),
      () => Effect.sync(() => (server.frontDoor = undefined))
    )
  })
