/**
 * The Node HTTP server of the appliance, with a shutdown that never waits on clients.
 *
 * Node's `server.close()` stops accepting and closes the keep-alive connections idle at that
 * moment, then waits for every other connection to end. A connection whose request is in flight
 * at that moment stays open after its response until the client drops it (undici keeps idle
 * sockets 4 s), and a client that stalls in the middle of a body holds it up to `requestTimeout`.
 * SIGTERM would then take seconds to minutes. Here, once closing, each connection is closed as soon
 * as its response is done, and whatever is still open after the grace period is cut.
 */
import * as http from "node:http"

/** How long in-flight requests get to finish after SIGTERM before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 5_000

export class HeraldHttpServer extends http.Server {
  private closing = false

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
