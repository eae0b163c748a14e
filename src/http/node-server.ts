/**
 * The Node HTTP server of the appliance, with a shutdown that never waits on clients.
 *
 * Node's `server.close()` stops accepting and closes the keep-alive connections idle at that
 * moment, then waits for every other connection to end. A connection whose request is in flight
 * at that moment stays open after its response until the client drops it (undici keeps idle
 * sockets 4 s), and a client that stalls in the middle of a body holds it up to `requestTimeout`:
 * SIGTERM would take seconds to minutes. Here, once closing, each connection is closed as soon as
 * its response is done, and whatever is still open after the grace period is cut.
 *
 * The API's request handler is attached after the server listens and detached before it closes; a
 * request arriving outside that window (on a kept-alive connection, at shutdown) would get no
 * answer at all. It gets a 503 in the envelope.
 */
import * as http from "node:http"

/** How long in-flight requests get to finish after SIGTERM before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 5_000

const UNAVAILABLE = JSON.stringify({
  error: { type: "api_error", code: "unavailable", message: "Herald is starting or shutting down; retry shortly" }
})

export class HeraldHttpServer extends http.Server {
  private closing = false

  constructor() {
    super()
    this.on("request", (_request: http.IncomingMessage, response: http.ServerResponse) => {
      // Only this listener: the API is not attached (yet, or any more).
      if (this.listenerCount("request") > 1) return
      response.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1" })
      response.end(UNAVAILABLE)
    })
  }

  override close(callback?: (error?: Error) => void): this {
    if (!this.closing) {
      this.closing = true
      const idle = setInterval(() => this.closeIdleConnections(), 50)
      const cut = setTimeout(() => this.closeAllConnections(), SHUTDOWN_GRACE_MS)
      idle.unref()
      cut.unref()
      this.once("close", () => {
        clearInterval(idle)
        clearTimeout(cut)
      })
    }
    return super.close(callback)
  }
}

/** For `NodeHttpServer.layer(createHttpServer, …)`. */
export const createHttpServer = (): http.Server => new HeraldHttpServer()
