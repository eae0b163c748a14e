/**
 * Start-up's first step: the HTTP and MX listen addresses are free. Checked before the database
 * opens and before any actor starts, so a port that is taken (a second `npm start`, another
 * server on 8080) stops start-up at once with one line naming the address and its variable,
 * instead of after the migrations, with the MTA already running.
 */
import * as net from "node:net"
import { Data, Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"

export class ListenAddressUnavailable extends Data.TaggedError("ListenAddressUnavailable")<{
  readonly message: string
}> {}

export interface ListenAddress {
  readonly host: string
  readonly port: number
  readonly hostVariable: string
  readonly portVariable: string
}

const hostPort = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`)

const reason = (address: ListenAddress, error: NodeJS.ErrnoException): string => {
  switch (error.code) {
    case "EADDRINUSE":
      return `the address is already in use; stop what listens there or set ${address.portVariable} to another port`
    case "EACCES":
      return `permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE); set ${address.portVariable} to a port above 1023`
    case "EADDRNOTAVAIL":
      return `no network interface of this machine has that address; check ${address.hostVariable}`
    default:
      return error.message
  }
}

/**
 * Listens on the address (held until the scope closes), or fails with the line to print. A client
 * that connects meanwhile (a health-check loop, a load balancer's probe) is hung up on at once:
 * `close()` waits for every accepted connection, so one left open held start-up for good under
 * Deno (issue 31), and the client's request would never be answered; hung up on, it asks again.
 */
export const holdListenAddress = (address: ListenAddress) =>
  Effect.acquireRelease(
    Effect.async<net.Server, ListenAddressUnavailable>((resume) => {
      const server = net.createServer((socket) => socket.destroy())
      server.once("error", (error: NodeJS.ErrnoException) =>
        resume(Effect.fail(
          new ListenAddressUnavailable({
            message: `herald: cannot listen on ${hostPort(address.host, address.port)} (${address.portVariable}): ${reason(address, error)}`
          })
        )))
      server.listen({ host: address.host, port: address.port, exclusive: true }, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

/**
 * Both addresses are held at once while checking, so an HTTP port equal to the MX port is caught
 * too; they are released before the real servers bind them a moment later. Port 0 (any free
 * port) needs no check.
 */
export const ensureListenAddressesFree = Effect.gen(function*() {
  const config = yield* AppConfig
  const addresses: ReadonlyArray<ListenAddress> = [
    { host: config.httpHost, port: config.httpPort, hostVariable: "HERALD_HTTP_HOST", portVariable: "HERALD_HTTP_PORT" },
    { host: config.smtpHost, port: config.smtpPort, hostVariable: "HERALD_SMTP_HOST", portVariable: "HERALD_SMTP_PORT" }
  ]
  yield* Effect.forEach(addresses.filter((a) => a.port !== 0), holdListenAddress, { discard: true })
}).pipe(Effect.scoped)
