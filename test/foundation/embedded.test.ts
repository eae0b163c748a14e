/**
 * The zero-configuration start: the embedded PostgreSQL under HERALD_DATA_DIR keeps its data
 * across restarts, stops with the appliance, survives a SIGKILL of the appliance (the orphaned
 * cluster is recovered at the next start), and runs as root or as an ordinary user.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { newToken, spawnAppliance } from "../support/appliance.ts"
import { waitForStatus } from "../support/net.ts"

/** A child appliance's start-up (tsx compiling the tree) can take a minute on a loaded machine. */
const START_WAIT_MS = 150_000

const dataDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-data-"))
  fs.chmodSync(dir, 0o755)
  return dir
}

describe("embedded PostgreSQL", () => {
  it("keeps data across a graceful restart and stops with the appliance", async () => {
    const dir = dataDir()
    const token = newToken()
    const env = { HERALD_DATA_DIR: dir, HERALD_BOOTSTRAP_KEY: token }
    const first = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env })
    const created = await first.request("POST", "/v1/client/keys", { token, body: { label: "survivor" } })
    expect(created.status).toBe(201)
    await first.stop()
    expect(await first.exited).toBe(0)
    expect(fs.existsSync(path.join(dir, "pg", "postmaster.pid"))).toBe(false)
    const second = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env })
    const keys = await second.request("GET", "/v1/client/keys", { token })
    expect(keys.json.items.map((k: { label: string }) => k.label)).toContain("survivor")
    await second.stop()
  }, 400_000)

  it("recovers the cluster left running by a SIGKILLed appliance", async () => {
    const dir = dataDir()
    const token = newToken()
    const env = { HERALD_DATA_DIR: dir, HERALD_BOOTSTRAP_KEY: token }
    const killed = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env })
    await killed.request("POST", "/v1/client/keys", { token, body: { label: "before-crash" } })
    killed.child.kill("SIGKILL")
    await killed.exited
    expect(fs.existsSync(path.join(dir, "pg", "postmaster.pid"))).toBe(true)
    const next = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env })
    const keys = await next.request("GET", "/v1/client/keys", { token })
    expect(keys.json.items.map((k: { label: string }) => k.label)).toContain("before-crash")
    await next.stop()
    expect(await next.exited).toBe(0)
  }, 400_000)

  it("runs as an ordinary user (when the tests run as root, as a system user made for it)", async () => {
    const asRoot = process.getuid?.() === 0
    if (asRoot) {
      try {
        execFileSync("id", ["heraldtest"], { stdio: "ignore" })
      } catch {
        execFileSync("useradd", ["--system", "--no-create-home", "heraldtest"])
      }
    }
    const uid = asRoot ? Number(execFileSync("id", ["-u", "heraldtest"]).toString().trim()) : process.getuid!()
    const gid = asRoot ? Number(execFileSync("id", ["-g", "heraldtest"]).toString().trim()) : process.getgid!()
    const dir = dataDir()
    fs.chownSync(dir, uid, gid)
    const app = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env: { HERALD_DATA_DIR: dir }, uid, gid })
    await waitForStatus(`${app.baseUrl}/health`)
    expect((await app.request("GET", "/v1/client/keys")).status).toBe(200)
    const owner = fs.statSync(path.join(dir, "pg", "PG_VERSION")).uid
    expect(owner).toBe(uid)
    await app.stop()
  }, 400_000)
})
