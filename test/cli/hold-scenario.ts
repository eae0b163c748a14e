/**
 * The start-up port check's scenario as a script of its own, so that it runs under Node and under
 * Deno alike (test/cli/listen-addresses.test.ts runs it in both): hold a free address as the check
 * does, connect to it and keep the connection open as a health-check loop's client would, then let
 * the address go. Prints one JSON line: whether the client was hung up on, how long letting go took,
 * and whether a real server could bind the address after it.
 */
import * as net from "node:net"
import { Effect, Exit, Scope } from "effect"
import { holdListenAddress } from "../../src/cli/listen-addresses.ts"

const port = Number(process.argv[2])

const scope = Effect.runSync(Scope.make())
await Effect.runPromise(
  holdListenAddress({ host: "127.0.0.1", port, hostVariable: "HERALD_HTTP_HOST", portVariable: "HERALD_HTTP_PORT" }).pipe(Scope.extend(scope))
)
const client = net.connect({ host: "127.0.0.1", port })
client.on("error", () => undefined)
const hungUp = await new Promise<boolean>((resolve) => {
  client.once("close", () => resolve(true))
  setTimeout(() => resolve(false), 2_000)
})
const started = performance.now()
const released = await Promise.race([
  Effect.runPromise(Scope.close(scope, Exit.void)).then(() => true),
  new Promise<false>((resolve) => setTimeout(() => resolve(false), 3_000))
])
const releaseMs = Math.round(performance.now() - started)
client.destroy()
const server = net.createServer()
const rebound = released && await new Promise<boolean>((resolve) => {
  server.once("error", () => resolve(false)).listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
})
console.log(JSON.stringify({ hungUp, released, releaseMs, rebound }))
process.exit(0)
