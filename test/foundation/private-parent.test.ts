/**
 * A data directory behind a private parent (a clone in /root, mode 0700, with the default
 * `./data`): as root the embedded cluster runs as `postgres`, which is given traverse rights on
 * exactly the directories that stopped it; as an ordinary user nothing needs to change.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { ensureTraversable } from "../../src/db/run-as.ts"
import { newToken, spawnAppliance } from "../support/appliance.ts"

/** A child appliance's start-up (tsx compiling the tree) can take a minute on a loaded machine. */
const START_WAIT_MS = 150_000

const asRoot = process.getuid?.() === 0

const privateParent = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-private-"))
  fs.chmodSync(dir, 0o700)
  return dir
}

const userIds = (name: string) => ({
  uid: Number(execFileSync("id", ["-u", name]).toString().trim()),
  gid: Number(execFileSync("id", ["-g", name]).toString().trim())
})

/** Whether `uid` can pass through `dir` (and everything above it). */
const traversableBy = (dir: string, uid: number, gid: number) => spawnSync("test", ["-x", dir], { uid, gid }).status === 0

describe("a data directory under a private parent directory", () => {
  it("starts, answers /health and keeps its data across a restart", async () => {
    const parent = privateParent()
    const dataDir = path.join(parent, "data")
    const token = newToken()
    const env = { HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_KEY: token }
    try {
      const first = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env })
      expect((await first.request("GET", "/health", { token: null })).status).toBe(200)
      expect((await first.request("POST", "/v1/client/keys", { token, body: { label: "kept" } })).status).toBe(201)
      await first.stop()
      expect(await first.exited).toBe(0)

      if (asRoot) {
        // The postgres user was given a way through the private parent, and the log says so.
        const postgres = userIds("postgres")
        expect(traversableBy(parent, postgres.uid, postgres.gid)).toBe(true)
        expect(first.output()).toContain(parent)
        expect(fs.statSync(path.join(dataDir, "pg", "PG_VERSION")).uid).toBe(postgres.uid)
      } else {
        // An ordinary user owns the whole path: nothing was changed.
        expect(fs.statSync(parent).mode & 0o777).toBe(0o700)
        expect(fs.statSync(path.join(dataDir, "pg", "PG_VERSION")).uid).toBe(process.getuid!())
      }

      const second = await spawnAppliance({ waitMs: START_WAIT_MS, databaseUrl: null, env })
      expect((await second.request("GET", "/health", { token: null })).status).toBe(200)
      const keys = await second.request("GET", "/v1/client/keys", { token })
      expect(keys.json.items.map((k: { label: string }) => k.label)).toContain("kept")
      await second.stop()
      expect(await second.exited).toBe(0)
      // Nothing left to grant the second time.
      expect(second.output()).not.toContain("traverse")
    } finally {
      fs.rmSync(parent, { recursive: true, force: true })
    }
  }, 400_000)

  it("grants traverse rights only on the directories that stop the user, top down", () => {
    const parent = privateParent()
    const inner = path.join(parent, "open", "private", "data")
    fs.mkdirSync(inner, { recursive: true })
    fs.chmodSync(path.join(parent, "open"), 0o755)
    fs.chmodSync(path.join(parent, "open", "private"), 0o700)
    fs.chmodSync(inner, 0o755)
    try {
      if (asRoot) {
        try {
          execFileSync("id", ["heraldtest"], { stdio: "ignore" })
        } catch {
          execFileSync("useradd", ["--system", "--no-create-home", "heraldtest"])
        }
        const user = userIds("heraldtest")
        expect(traversableBy(inner, user.uid, user.gid)).toBe(false)
        const grants = ensureTraversable(inner, user.uid, user.gid)
        expect(grants.map((g) => g.dir)).toEqual([parent, path.join(parent, "open", "private")])
        expect(traversableBy(inner, user.uid, user.gid)).toBe(true)
        // Traverse only: the user still cannot list the private directories.
        expect(spawnSync("ls", [parent], { uid: user.uid, gid: user.gid }).status).not.toBe(0)
      } else {
        // Our own directories are already ours to traverse: nothing is granted, modes stay.
        expect(ensureTraversable(inner, process.getuid!(), process.getgid!())).toEqual([])
        expect(fs.statSync(parent).mode & 0o777).toBe(0o700)
      }
    } finally {
      fs.rmSync(parent, { recursive: true, force: true })
    }
  })
})
