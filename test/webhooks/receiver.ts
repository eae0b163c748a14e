/**
 * A real webhook receiver on loopback for the tests: records every call (arrival time, headers,
 * raw body as received bytes) and answers with the status of its `mode` — or, in "hang" mode,
 * never answers.
 */
import * as http from "node:http"

export interface Hit {
  readonly at: number
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  // Test code reads arbitrary JSON bodies; each assertion states what it expects.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export interface Receiver {
  readonly hits: Array<Hit>
  /** The URL of `path` on this receiver. */
  readonly url: (path?: string) => string
  readonly port: number
  /** A status code to answer with, or "hang". */
  mode: number | "hang"
  /** Resolves once `n` calls satisfying `which` have arrived (throws after `timeoutMs`). */
  readonly waitFor: (n: number, which?: (hit: Hit) => boolean, timeoutMs?: number) => Promise<Array<Hit>>
  readonly close: () => Promise<void>
}

export const startReceiver = async (mode: number | "hang" = 200): Promise<Receiver> => {
  const hits: Array<Hit> = []
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      let json: unknown = undefined
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      hits.push({ at: Date.now(), path: req.url ?? "/", headers: req.headers, body, json })
      if (receiver.mode === "hang") return
      res.writeHead(receiver.mode).end(receiver.mode < 300 ? "thanks" : "broken")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as { port: number }).port
  const receiver: Receiver = {
    hits,
    port,
    mode,
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    waitFor: async (n, which = () => true, timeoutMs = 20_000) => {
      const end = Date.now() + timeoutMs
      for (;;) {
        const matching = hits.filter(which)
        if (matching.length >= n) return matching
        if (Date.now() > end) throw new Error(`${matching.length} of ${n} webhook calls within ${timeoutMs} ms`)
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return receiver
}
