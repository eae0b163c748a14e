/**
 * What the operator commands print, as a script reads it: only JSON on stdout (the logs, such as
 * the migrations of a fresh database, on stderr), a refusal as one `{"error": {code, message}}`
 * line on stderr with exit code 1 and nothing on stdout, no colour codes in a pipe, and the admin
 * API's password rule.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { type CommandResult, runMain } from "../support/appliance.ts"
import { emptyDatabase, query } from "../support/database.ts"

/** A command start-up under a loaded machine can take tens of seconds. */
const COMMAND_TIMEOUT_MS = 240_000

const ESCAPE = "\u001b["

let databaseUrl: string
beforeAll(async () => {
  databaseUrl = await emptyDatabase()
})

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  runMain(args, { DATABASE_URL: databaseUrl, HERALD_LOG_LEVEL: "info", ...env }, COMMAND_TIMEOUT_MS)

/** The refusal: exit code 1, stdout empty, stderr exactly one `{"error": {code, message}}` line. */
const expectRefusal = (result: CommandResult, code: string) => {
  expect(result.code, result.stdout + result.stderr).toBe(1)
  expect(result.stdout).toBe("")
  const lines = result.stderr.trim().split("\n")
  expect(lines, result.stderr).toHaveLength(1)
  const body = JSON.parse(lines[0]!)
  expect(Object.keys(body)).toEqual(["error"])
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"])
  expect(body.error.code).toBe(code)
  expect(body.error.message).toEqual(expect.any(String))
  return body.error as { code: string; message: string }
}

describe("operator command output", () => {
  it("prints only JSON on stdout, the logs of the first run's migrations going to stderr", async () => {
    const result = await run(["accounts", "create", "--name", "Pipe", "--email", "pipe@example.org", "--password", "eight ch"])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ email: "pipe@example.org", is_admin: false })
    expect(result.stderr).toContain("migration applied")

    const migrate = await run(["migrate"])
    expect(migrate.code, migrate.stderr).toBe(0)
    expect(JSON.parse(migrate.stdout)).toMatchObject({ status: "up_to_date" })
  }, 600_000)

  it("refuses an unknown id with one JSON line on stderr, exit code 1 and nothing on stdout", async () => {
    const error = expectRefusal(await run(["keys", "list", "--account", "acc_doesnotexist"]), "not_found")
    expect(error.message).toContain("acc_doesnotexist")
  }, 300_000)

  it("refuses bad arguments the same way, never with the parser's internal structure", async () => {
    const missing = expectRefusal(await run(["accounts", "create", "--name", "Half"]), "invalid_arguments")
    expect(missing.message).toContain("--email")
    expect(missing.message).not.toContain("_tag")
    const unknown = expectRefusal(await run(["acounts", "list"]), "invalid_arguments")
    expect(unknown.message).not.toContain("_tag")
  }, 300_000)

  it("refuses a password of 7 characters, as the admin API does, and creates nothing", async () => {
    const error = expectRefusal(
      await run(["accounts", "create", "--name", "Short", "--email", "short@example.org", "--password", "seven c"]),
      "invalid_arguments"
    )
    expect(error.message).toMatch(/--password: .*at least 8 characters/)
    const rows = await query(databaseUrl, "SELECT 1 FROM accounts WHERE email = 'short@example.org'")
    expect(rows).toEqual([])
  }, 300_000)

  it("writes no colour codes into a pipe: help, logs (even pretty ones) and refusals", async () => {
    const help = await run(["accounts", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("create")
    expect(help.stdout).not.toContain(ESCAPE)

    const pretty = await run(["accounts", "list"], { HERALD_LOG_FORMAT: "pretty", HERALD_LOG_LEVEL: "debug" })
    expect(pretty.code, pretty.stderr).toBe(0)
    expect(JSON.parse(pretty.stdout).total).toBeGreaterThan(0)
    expect(pretty.stdout + pretty.stderr).not.toContain(ESCAPE)

    const refused = await run(["keys", "revoke"])
    expect(refused.stdout + refused.stderr).not.toContain(ESCAPE)
  }, 600_000)
})
