/** Loopback helpers shared by the tests: free ports and waiting for an HTTP endpoint. */
import * as net from "node:net"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `url` until it answers `status` (default 200) or the deadline passes. */
export const waitForStatus = async (url: string, timeoutMs = 60_000, status = 200): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  let last = "no answer"
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      if (response.status === status) return
      last = `HTTP ${response.status}`
    } catch (error) {
      last = String(error)
    }
    await sleep(150)
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`)
}
