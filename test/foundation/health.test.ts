/**
 * GET /health follows the database: 503 with the reason while PostgreSQL is down, 200 again once
 * it is back — without restarting the appliance.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../../src/db/embedded-postgres.ts"
import { startAppliance } from "../support/appliance.ts"
import { freePort, waitForStatus } from "../support/net.ts"

const startCluster = async (dir: string, port: number) => {
  const scope = Effect.runSync(Scope.make())
  const cluster = await Effect.runPromise(startEmbeddedPostgres(dir, { port }).pipe(Scope.extend(scope)))
  return { url: cluster.url, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

describe("GET /health", () => {
  it("turns 503 while the database is down and 200 again when it is back", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-health-"))
    fs.chmodSync(dir, 0o755)
    const port = await freePort()
    let cluster = await startCluster(dir, port)
    const app = await startAppliance({ databaseUrl: cluster.url })
    try {
      expect((await app.request("GET", "/health", { token: null })).status).toBe(200)
      await cluster.stop()
      const down = await app.request("GET", "/health", { token: null })
      expect(down.status).toBe(503)
      expect(down.json.error).toMatchObject({ type: "api_error", code: "database_unavailable" })
      expect(down.json.error.message).toMatch(/database/)
      cluster = await startCluster(dir, port)
      await waitForStatus(`${app.baseUrl}/health`, 15_000)
      expect((await app.request("GET", "/v1/client/keys")).status).toBe(200)
    } finally {
      await app.stop()
      await cluster.stop()
    }
  }, 90_000)
})
