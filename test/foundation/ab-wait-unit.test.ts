/**
 * HERALD_AB_WAIT_UNIT_SECONDS (issue 30 item 12) is for tests and staging: with HERALD_ENV=production
 * any value but 60 stops start-up with exit 1 and one line naming the variable, before the
 * database opens; 60 is accepted there (the refusal is not of the variable itself).
 */
import { describe, expect, it } from "vitest"
import { runMain } from "../support/appliance.ts"

/** Nothing listens here: a start that got past the configuration would fail differently. */
const NO_DATABASE = "postgres://nobody@127.0.0.1:1/none"
const PRODUCTION = { HERALD_ENV: "production", DATABASE_URL: NO_DATABASE, HERALD_BASE_URL: "https://mail.example.com" }

describe("HERALD_AB_WAIT_UNIT_SECONDS in production", () => {
  it("refuses any value but 60: exit 1, one line naming the variable", async () => {
    const result = await runMain([], { ...PRODUCTION, HERALD_AB_WAIT_UNIT_SECONDS: "1" }, 120_000)
    expect(result.code).toBe(1)
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain("HERALD_AB_WAIT_UNIT_SECONDS")
    expect(lines[0]).toContain("HERALD_ENV=production")
  }, 150_000)

  it("takes 60 (the configuration passes; the start fails later, at the missing database)", async () => {
    const result = await runMain([], { ...PRODUCTION, HERALD_AB_WAIT_UNIT_SECONDS: "60" }, 120_000)
    expect(result.stderr).not.toContain("HERALD_AB_WAIT_UNIT_SECONDS")
  }, 150_000)
})
