/**
 * docker/entrypoint.sh, the image's entrypoint, run here on a stand-in for the appliance (a Node
 * one-liner): a process that dies of a crash (V8's heap-limit abort is exit 134) is started again;
 * an error exit (1) is not; SIGTERM reaches the running process and ends the loop with its status.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/appliance.ts"
import { eventually } from "../support/eventually.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-entrypoint-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Runs the entrypoint on a stand-in that appends its run number to `log` and then does `behaviour`. */
const run = (name: string, behaviour: string) => {
  const log = path.join(dir, `${name}.log`)
  const script = `
    const fs = require("node:fs")
    const runs = fs.existsSync(${JSON.stringify(log)}) ? fs.readFileSync(${JSON.stringify(log)}, "utf8").split("\\n").filter(Boolean).length : 0
    // The handler first: the test sends SIGTERM as soon as it reads this run's line.
    process.on("SIGTERM", () => { fs.appendFileSync(${JSON.stringify(log)}, "sigterm\\n"); process.exit(0) })
    fs.appendFileSync(${JSON.stringify(log)}, "run " + (runs + 1) + "\\n")
    ${behaviour}
  `
  const child = spawn("bash", [path.join(repoRoot, "docker/entrypoint.sh"), process.execPath, "-e", script], { stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const lines = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean) : [])
  return { child, exited, lines, stderr: () => stderr }
}

describe("docker/entrypoint.sh", () => {
  it("starts the appliance again after it crashes, and passes SIGTERM on and stops", async () => {
    // The first run aborts as V8 does at its heap limit; the second keeps running.
    const app = run("crash", "if (runs === 0) process.abort(); setInterval(() => {}, 1000)")
    await eventually(async () => (app.lines().length >= 2 ? true : undefined), "the second run", 10_000)
    expect(app.lines()).toEqual(["run 1", "run 2"])
    expect(app.stderr()).toContain("exited with status 134")
    app.child.kill("SIGTERM")
    expect(await app.exited).toBe(0)
    expect(app.lines()).toEqual(["run 1", "run 2", "sigterm"])
  }, 20_000)

  it("does not restart after an error exit, and exits with its status", async () => {
    const app = run("config-error", "process.exit(1)")
    expect(await app.exited).toBe(1)
    expect(app.lines()).toEqual(["run 1"])
  })
})
