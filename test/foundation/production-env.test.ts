/**
 * HERALD_ENV=production as the image runs it (issue #26, finding 7): the Dockerfile sets it, and in
 * production start-up refuses http public URLs with one line on stderr before anything listens or
 * the database opens; with https URLs the appliance starts. (In production MX hosts on private
 * addresses are refused: test/mta/private-mx.test.ts; webhooks: test/webhooks/dispatch.test.ts.)
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot, runMain, spawnAppliance } from "../support/appliance.ts"

/** A child appliance's start-up (tsx compiling the tree) can take a minute on a loaded machine. */
const START_WAIT_MS = 150_000
/** Nothing listens here: a refusal that reached the database would fail differently (and later). */
const NO_DATABASE = "postgres://nobody@127.0.0.1:1/none"

describe("HERALD_ENV=production", () => {
  it("is the docker image's environment", () => {
    const dockerfile = fs.readFileSync(path.join(repoRoot, "docker/Dockerfile"), "utf8")
    const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile)?.[1] ?? ""
    expect(env.split(/\s+\\?\s*/)).toContain("HERALD_ENV=production")
  })

  it.each([
    ["an http HERALD_BASE_URL", { HERALD_BASE_URL: "http://mail.example.com" }, "HERALD_BASE_URL is http://mail.example.com"],
    ["no HERALD_BASE_URL (the default is http://localhost)", {}, "HERALD_BASE_URL is http://localhost:"],
    [
      "an http HERALD_TRACK_URL",
      { HERALD_BASE_URL: "https://mail.example.com", HERALD_TRACK_URL: "http://t.example.com" },
      "HERALD_TRACK_URL is http://t.example.com"
    ]
  ])("refuses to start with %s: exit 1 and one line naming the variable", async (_, urls, named) => {
    const result = await runMain([], { HERALD_ENV: "production", DATABASE_URL: NO_DATABASE, ...urls }, 120_000)
    expect(result.code).toBe(1)
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain("HERALD_ENV=production needs https public URLs")
    expect(lines[0]).toContain(named)
    expect(lines[0]).toContain("HERALD_ENV=development")
  }, 150_000)

  it("starts with https public URLs", async () => {
    const app = await spawnAppliance({
      waitMs: START_WAIT_MS,
      env: { HERALD_ENV: "production", HERALD_BASE_URL: "https://mail.example.com", HERALD_TRACK_URL: "https://t.example.com" }
    })
    try {
      expect((await app.request("GET", "/health", { token: null })).status).toBe(200)
      expect((await app.request("GET", "/v1/client/keys")).status).toBe(200)
    } finally {
      await app.stop()
    }
    expect(app.output()).not.toContain("needs https")
  }, 300_000)
})
