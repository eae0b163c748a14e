/**
 * Console passwords (issue 28): the first start prints, once, the console's URL and the admin's
 * password; HERALD_BOOTSTRAP_PASSWORD sets it at each start (an unchanged one keeps the sessions,
 * a changed one ends them); `herald accounts set-password` reads a new one from stdin, never
 * echoes it, and ends the account's sessions.
 */
import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { heraldUnderNode, repoRoot, spawnAppliance, startAppliance } from "../support/appliance.ts"
import { freshDatabase } from "../support/database.ts"
import { newAccount, signIn, signInRequest, withCookie } from "../support/console-session.ts"

/** Herald (compiled, as `npm run herald` runs it) with `args`, and `input` piped to its stdin. */
const runWithInput = (args: ReadonlyArray<string>, env: Record<string, string>, input: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(heraldUnderNode[0]!, [...heraldUnderNode.slice(1), ...args], {
      cwd: repoRoot,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", HERALD_LOG_LEVEL: "warn", ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })

describe("the first start", () => {
  it("prints the console's URL and the admin's password once; the password signs in", async () => {
    const databaseUrl = await freshDatabase()
    const first = await spawnAppliance({ databaseUrl })
    let password: string
    try {
      const shown = /The console: (\S+) — sign in as (\S+) with the password \(shown only once\):\s+(\S+)/.exec(first.output())
      expect(shown, first.output()).not.toBeNull()
      expect(shown![1]).toMatch(/^http:\/\/localhost:\d+\/console\/$/)
      expect(shown![2]).toBe("admin@herald.test")
      password = shown![3]!
      await signIn(first, "admin@herald.test", password)
    } finally {
      await first.stop()
    }
    const second = await spawnAppliance({ databaseUrl, bootstrapKey: first.adminToken })
    try {
      expect(second.output()).not.toContain("The console:")
      expect(second.output()).not.toContain(password)
      // The password was not replaced either.
      await signIn(second, "admin@herald.test", password)
    } finally {
      await second.stop()
    }
  })
})

describe("HERALD_BOOTSTRAP_PASSWORD and set-password", () => {
  it("sets the admin's password at each start (a changed one ends its sessions); set-password reads stdin and ends the account's sessions", async () => {
    const databaseUrl = await freshDatabase()
    const start = (password: string) => startAppliance({ databaseUrl, bootstrapKey: "t".repeat(40), env: { HERALD_BOOTSTRAP_PASSWORD: password } })
    let app = await start("first passphrase")
    const kept = await signIn(app, "admin@herald.test", "first passphrase")
    await app.stop()

    app = await start("first passphrase")
    expect((await withCookie(app, kept.cookie, "GET", "/console/session")).status, "an unchanged password keeps sessions").toBe(200)
    await app.stop()

    app = await start("second passphrase")
    try {
      expect((await withCookie(app, kept.cookie, "GET", "/console/session")).status, "a changed password ends them").toBe(401)
      expect((await signInRequest(app, "admin@herald.test", "first passphrase")).status).toBe(401)
      await signIn(app, "admin@herald.test", "second passphrase")

      const person = await newAccount(app)
      const session = await signIn(app, person.email, person.password)
      const env = { DATABASE_URL: databaseUrl, HERALD_HOSTNAME: "herald.test" }
      const short = await runWithInput(["accounts", "set-password", "--account", person.email], env, "short\n")
      expect(short.code).toBe(1)
      expect(JSON.parse(short.stderr.trim().split("\n").at(-1)!).error.code).toBe("invalid_arguments")
      expect((await withCookie(app, session.cookie, "GET", "/console/session")).status, "a refusal changes nothing").toBe(200)

      const secret = "a brand new passphrase"
      const set = await runWithInput(["accounts", "set-password", "--account", person.email.toUpperCase()], env, `${secret}\n`)
      expect(set.code, set.stderr).toBe(0)
      expect(JSON.parse(set.stdout)).toEqual({ id: person.id, email: person.email, password_set: true, sessions_ended: 1 })
      expect(set.stdout + set.stderr).not.toContain(secret)
      expect((await withCookie(app, session.cookie, "GET", "/console/session")).status).toBe(401)
      expect((await withCookie(app, session.cookie, "GET", "/v1/client/keys")).status).toBe(401)
      expect((await signInRequest(app, person.email, person.password)).status).toBe(401)
      await signIn(app, person.email, secret)

      const unknown = await runWithInput(["accounts", "set-password", "--account", "nobody@console.test"], env, `${secret}\n`)
      expect(unknown.code).toBe(1)
      expect(JSON.parse(unknown.stderr.trim().split("\n").at(-1)!).error.code).toBe("not_found")
    } finally {
      await app.stop()
    }
  }, 300_000)

  it("refuses a HERALD_BOOTSTRAP_PASSWORD under 8 characters at start-up, naming it", async () => {
    const result = await runWithInput(["migrate"], { DATABASE_URL: await freshDatabase(), HERALD_BOOTSTRAP_PASSWORD: "short" }, "")
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("HERALD_BOOTSTRAP_PASSWORD")
  }, 120_000)
})
