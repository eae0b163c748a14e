/**
 * The start-up port check (src/cli/listen-addresses.ts) holds the HTTP and MX addresses for a
 * moment. A client that connects then — a health-check loop, a load balancer's probe — is hung up
 * on at once, and the check lets the address go without waiting for it: an accepted connection
 * left open made `server.close()` wait for good (under Deno it held start-up; issue 31).
 */
import * as net from "node:net"
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { holdListenAddress } from "../../src/cli/listen-addresses.ts"
import { freePort } from "../support/net.ts"

describe("the start-up port check", () => {
  it("hangs up on a client that connects while it holds the address, and lets the address go at once", async () => {
    const port = await freePort()
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
    expect(hungUp).toBe(true)
    const started = performance.now()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    expect(performance.now() - started).toBeLessThan(1_000)
    // The address is free again: the real server can bind it.
    const server = net.createServer()
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve))
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
