/**
 * The start-up port check (src/cli/listen-addresses.ts) holds the HTTP and MX addresses for a
 * moment. A client that connects then — a health-check loop, a load balancer's probe — is hung up
 * on at once, and the check lets the address go without waiting for it: an accepted connection
 * left open made `server.close()` wait for good (it held start-up under Deno; issue 31). The
 * scenario (test/cli/hold-scenario.ts) runs under Node and under Deno; a whole appliance started
 * while a probe knocks at its port is in test/foundation/startup.test.ts.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/appliance.ts"
import { freePort } from "../support/net.ts"

const runtimes = {
  node: [process.execPath, "--import", "tsx"],
  deno: [path.join(repoRoot, "node_modules/.bin/deno"), "run", "-A"]
} as const

const runScenario = (runtime: keyof typeof runtimes, port: number) =>
  new Promise<string>((resolve, reject) => {
    const [command, ...args] = runtimes[runtime]
    const child = spawn(command, [...args, "test/cli/hold-scenario.ts", String(port)], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("error", reject)
    child.once("exit", () => resolve(output))
  })

describe("the start-up port check", () => {
  for (const runtime of ["node", "deno"] as const) {
    it(`hangs up on a client that connects while it holds the address, and lets the address go at once (${runtime})`, async () => {
      const output = await runScenario(runtime, await freePort())
      const line = output.split("\n").find((l) => l.startsWith("{"))
      expect(line, output).toBeDefined()
      const outcome = JSON.parse(line!) as { hungUp: boolean; released: boolean; releaseMs: number; rebound: boolean }
      expect(outcome).toMatchObject({ hungUp: true, released: true, rebound: true })
      expect(outcome.releaseMs).toBeLessThan(1_000)
    }, 120_000)
  }
})
