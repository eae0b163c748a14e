/** Loopback helpers shared by the tests: free ports and waiting for an HTTP endpoint. */
import * as net from "node:net"

/**
 * Ports handed out by `freePort`: below the kernel's ephemeral range (32768–60999 here), so no
 * outgoing connection — a PostgreSQL client, a fetch — can take one between `freePort` answering
 * and the server binding it, and each vitest worker has a slice of its own, so two workers never
 * hand out the same port. (A port from listen(0), closed and handed on, was free only for a
 * moment: an appliance once failed to bind it while another test's appliance, on the same port,
 * answered its health check.) Within its slice a process starts at a place of its own (from its
 * pid), so two test runs on one machine — two checkouts, a bench beside the suite — rarely meet.
 */
const PORTS_FROM = 20_000
const PORTS_PER_WORKER = 1_500
const WORKER_SLICES = 8
const worker = Number(process.env["VITEST_POOL_ID"] ?? 0) % WORKER_SLICES
let nextPort = (process.pid * 7_919) % PORTS_PER_WORKER

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** A port of this worker's slice that is free now, each handed out once before the slice wraps around. */
export const freePort = async (): Promise<number> => {
  for (let tried = 0; tried < PORTS_PER_WORKER; tried++) {
    const port = PORTS_FROM + worker * PORTS_PER_WORKER + nextPort
    nextPort = (nextPort + 1) % PORTS_PER_WORKER
    if (await bindable(port)) return port
  }
  throw new Error(`no free port in this worker's slice (${PORTS_PER_WORKER} ports from ${PORTS_FROM + worker * PORTS_PER_WORKER})`)
}

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

/**
 * Connects to `port` over and over (a connection every millisecond, each left open until the
 * far side closes it), as load balancers' probes and health-check loops do while a server starts:
 * often enough to land inside the start-up port check, which holds the address for a moment only.
 * Call the returned function to stop; it closes what is still open.
 */
const KNOCKS_PER_TICK = 1

export const knockRepeatedly = (port: number): () => void => {
  const open = new Set<net.Socket>()
  const timer = setInterval(() => {
    for (let i = 0; i < KNOCKS_PER_TICK; i++) {
      const socket = net.connect({ host: "127.0.0.1", port })
      open.add(socket)
      socket.on("error", () => undefined)
      socket.on("close", () => open.delete(socket))
    }
  }, 1)
  return () => {
    clearInterval(timer)
    for (const socket of open) socket.destroy()
  }
}
