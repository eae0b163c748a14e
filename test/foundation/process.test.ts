/**
 * Operating the process as a user does: `npm start` stopped with SIGTERM, a port that is taken,
 * and `.env` in the working directory — each with a real process.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { heraldUnderNode, newToken, repoRoot, runMain } from "../support/appliance.ts"
import { emptyDatabase, query } from "../support/database.ts"
import { freePort, sleep, waitForStatus } from "../support/net.ts"

/** A child appliance's start-up (tsx compiling the tree) can take a minute on a loaded machine. */
const START_WAIT_MS = 150_000

const started: Array<ChildProcess> = []
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

const minimalEnv = () => ({ PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" })

const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })))

const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))])

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Polls `condition` until it holds, or fails after `ms`. */
const waitUntil = async (what: string, ms: number, condition: () => Promise<boolean> | boolean) => {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(100)
  }
}

/** The processes under `root` (children, their children, …) as `ps` sees them now. */
const descendants = (root: number): Array<{ pid: number; ppid: number; args: string }> => {
  const all = execFileSync("ps", ["-eo", "pid=,ppid=,args="]).toString().trim().split("\n").map((line) => {
    const [pid, ppid, ...args] = line.trim().split(/\s+/)
    return { pid: Number(pid), ppid: Number(ppid), args: args.join(" ") }
  })
  const found: Array<{ pid: number; ppid: number; args: string }> = []
  const parents = new Set([root])
  for (let grew = true; grew;) {
    grew = false
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid)
        found.push(p)
        grew = true
      }
    }
  }
  return found
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Occupies 127.0.0.1:`port` until closed, as another program would. */
const occupy = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve(server))
  })

const applianceEnv = async () => {
  const httpPort = await freePort()
  const smtpPort = await freePort()
  return {
    httpPort,
    smtpPort,
    env: {
      DATABASE_URL: await emptyDatabase(),
      HERALD_HTTP_HOST: "127.0.0.1",
      HERALD_HTTP_PORT: String(httpPort),
      HERALD_SMTP_HOST: "127.0.0.1",
      HERALD_SMTP_PORT: String(smtpPort),
      HERALD_HOSTNAME: "herald.test",
      HERALD_BOOTSTRAP_KEY: newToken(),
      HERALD_MTA_ENABLED: "false",
      HERALD_LOG_LEVEL: "warn"
    }
  }
}

describe("npm start", () => {
  // npm runs the script through `sh -c`; a SIGTERM to npm once left that shell's node serving,
  // with no parent. The script execs node, so npm's own child is the appliance: npm forwards the
  // signal to it, the appliance shuts down gracefully and npm exits with its code, 0.
  it("stops the appliance cleanly when the npm process gets SIGTERM: port closed, no process left, exit code 0", async () => {
    const { env, httpPort } = await applianceEnv()
    const npm = spawn("npm", ["start"], {
      cwd: repoRoot,
      env: { ...minimalEnv(), ...env, npm_config_update_notifier: "false" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    started.push(npm)
    let output = ""
    npm.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    npm.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = exitOf(npm)
    await Promise.race([
      waitForStatus(`http://127.0.0.1:${httpPort}/health`, START_WAIT_MS),
      exited.then(() => Promise.reject(new Error(`npm start exited before the appliance was healthy:\n${output}`)))
    ])

    const tree = descendants(npm.pid!)
    try {
      npm.kill("SIGTERM")
      expect(await within(exited, 15_000, "npm exit")).toEqual({ code: 0, signal: null })
      await waitUntil("the HTTP port closing", 15_000, async () => !(await listening(httpPort)))
      await waitUntil("the appliance's processes ending", 15_000, () => tree.every((p) => !alive(p.pid)))
      // The process npm started is the appliance itself (node), not a shell in between.
      const child = tree.find((p) => p.ppid === npm.pid)
      expect(child?.args).toMatch(/^node .*bin\/herald\.mjs$/)
    } finally {
      for (const p of tree) if (alive(p.pid)) process.kill(p.pid, "SIGTERM")
    }
  }, 300_000)
})

describe("a listen address that is taken", () => {
  it.each([
    ["HERALD_HTTP_PORT", "httpPort"],
    ["HERALD_SMTP_PORT", "smtpPort"]
  ] as const)("stops start-up before the database or any actor, with one line naming the address and %s", async (variable, which) => {
    const setup = await applianceEnv()
    const port = setup[which]
    const squatter = await occupy(port)
    try {
      const result = await runMain([], { ...setup.env, HERALD_LOG_LEVEL: "info" }, START_WAIT_MS)
      expect(result.code, result.stdout + result.stderr).toBe(1)
      const lines = result.stderr.trim().split("\n")
      expect(lines, result.stderr).toHaveLength(1)
      expect(lines[0]).toContain(`127.0.0.1:${port}`)
      expect(lines[0]).toContain(variable)
      expect(lines[0]).toMatch(/in use/)
      // Nothing started: no log line at all, not even a migration.
      expect(result.stdout).toBe("")
      const [table] = await query<{ t: string | null }>(setup.env.DATABASE_URL, "SELECT to_regclass('herald_migrations')::text AS t")
      expect(table!.t).toBeNull()
    } finally {
      await new Promise((resolve) => squatter.close(resolve))
    }
  }, 300_000)
})

describe(".env", () => {
  it("is git-ignored", () => {
    // Exit code 0: ignored (a non-zero code throws).
    execFileSync("git", ["check-ignore", "--quiet", "--no-index", ".env"], { cwd: repoRoot })
  })

  it("is read from the working directory at start-up, and the environment wins over it", async () => {
    const { env, httpPort, smtpPort } = await applianceEnv()
    const fileSmtpPort = await freePort()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-dotenv-"))
    fs.writeFileSync(
      path.join(dir, ".env"),
      [
        "# written as config/example.env suggests",
        `DATABASE_URL=${env.DATABASE_URL}`,
        `HERALD_HTTP_PORT=${httpPort}`,
        `HERALD_SMTP_PORT=${fileSmtpPort}`,
        `export HERALD_BOOTSTRAP_KEY="${env.HERALD_BOOTSTRAP_KEY}"`,
        "HERALD_HTTP_HOST='127.0.0.1'",
        ""
      ].join("\n")
    )
    // Only the SMTP port is in the real environment (and differs from the file's); the rest
    // comes from the file alone.
    const child = spawn(
      heraldUnderNode[0]!,
      heraldUnderNode.slice(1),
      {
        cwd: dir,
        env: {
          ...minimalEnv(),
          HERALD_SMTP_PORT: String(smtpPort),
          HERALD_SMTP_HOST: "127.0.0.1",
          HERALD_HOSTNAME: "herald.test",
          HERALD_MTA_ENABLED: "false",
          HERALD_LOG_LEVEL: "warn"
        },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    started.push(child)
    let output = ""
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = exitOf(child)
    try {
      await Promise.race([
        waitForStatus(`http://127.0.0.1:${httpPort}/health`, START_WAIT_MS),
        exited.then(() => Promise.reject(new Error(`the appliance exited before it was healthy:\n${output}`)))
      ])
      const keys = await fetch(`http://127.0.0.1:${httpPort}/v1/client/keys`, {
        headers: { authorization: `Bearer ${env.HERALD_BOOTSTRAP_KEY}` }
      })
      expect(keys.status).toBe(200)
      expect(await listening(smtpPort)).toBe(true)
      expect(await listening(fileSmtpPort)).toBe(false)
      child.kill("SIGTERM")
      expect((await within(exited, 15_000, "exit")).code).toBe(0)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})
