/**
 * The local trial profile (`npm run dev`): it fills in what a laptop trial needs, says so once,
 * trusts only a reserved domain of the first account, and is refused with production.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { applyProfile, isReservedName } from "../../src/config/dev-profile.ts"
import { type ApplianceProcess, newToken, runMain, spawnAppliance } from "../support/appliance.ts"
import { freshDatabase } from "../support/database.ts"

describe("applyProfile", () => {
  it("does nothing without HERALD_PROFILE", () => {
    const env: Record<string, string | undefined> = {}
    expect(applyProfile(env)._tag).toBe("None")
    expect(env).toEqual({})
  })

  it("fills in only what is unset, and says what it set", () => {
    const env: Record<string, string | undefined> = { HERALD_PROFILE: "dev", HERALD_HOSTNAME: "mine.example" }
    const outcome = applyProfile(env)
    expect(outcome._tag).toBe("Applied")
    expect(env.HERALD_HOSTNAME).toBe("mine.example")
    expect(env.HERALD_WEBHOOK_ALLOW_PRIVATE).toBe("true")
    expect(outcome._tag === "Applied" && outcome.line).toContain("HERALD_WEBHOOK_ALLOW_PRIVATE=true")
    expect(outcome._tag === "Applied" && outcome.line).not.toContain("HERALD_HOSTNAME=")
  })

  it("is refused with production, naming both variables, and changes nothing", () => {
    const env: Record<string, string | undefined> = { HERALD_PROFILE: "dev", HERALD_ENV: "production" }
    const outcome = applyProfile(env)
    expect(outcome._tag).toBe("Refused")
    expect(outcome._tag === "Refused" && outcome.line).toMatch(/HERALD_PROFILE=dev.*HERALD_ENV=production/)
    expect(env.HERALD_WEBHOOK_ALLOW_PRIVATE).toBeUndefined()
  })

  it("refuses a profile it does not know", () => {
    expect(applyProfile({ HERALD_PROFILE: "demo" })._tag).toBe("Refused")
  })

  it("knows the reserved names", () => {
    expect(["acme.example", "a.TEST", "x.invalid"].every(isReservedName)).toBe(true)
    expect(["acme.com", "example.com", "testing.org"].some(isReservedName)).toBe(false)
  })
})

describe("an appliance started with HERALD_PROFILE=dev", () => {
  let app: ApplianceProcess
  const receiver = createServer((_req, res) => res.end("ok"))

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    // HERALD_HOSTNAME empty: left for the profile to fill in, as on a laptop.
    app = await spawnAppliance({ env: { HERALD_PROFILE: "dev", HERALD_HOSTNAME: "" } })
  }, 90_000)
  afterAll(async () => {
    await app?.stop()
    receiver.close()
  })

  it("says once what it set", () => {
    const lines = app.output().split("\n").filter((line) => line.includes("local trial profile (HERALD_PROFILE=dev)"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain("HERALD_HOSTNAME=herald.localhost")
    expect(lines[0]).toContain("HERALD_WEBHOOK_ALLOW_PRIVATE=true")
  })

  it("trusts the quick start's domain for the first account, and nothing else", async () => {
    const quickStart = await app.request("POST", "/v1/client/domains", { body: { domain: "acme.example" } })
    expect(quickStart.status).toBe(201)
    expect(quickStart.json).toMatchObject({ domain: "acme.example", verified: true, verified_by: "operator" })
    // The records it shows use the dotted host name the profile set.
    expect(JSON.stringify(quickStart.json.records)).toContain("herald.localhost")

    const realName = await app.request("POST", "/v1/client/domains", { body: { domain: "acme-trial.com" } })
    expect(realName.json).toMatchObject({ verified: false, verified_by: null })

    const second = await app.request("POST", "/v1/admin/accounts", {
      body: { name: "Second", email: "second@acme.example", password: "a long password" }
    })
    expect(second.status).toBe(201)
    const key = await app.request("POST", `/v1/admin/accounts/${second.json.id}/keys`, { body: { label: "k" } })
    expect(key.status).toBe(201)
    const other = await app.request("POST", "/v1/client/domains", { token: key.json.token, body: { domain: "beta.example" } })
    expect(other.status).toBe(201)
    expect(other.json).toMatchObject({ verified: false })
  })

  it("lets the key's webhook point at a receiver on this machine", async () => {
    const keys = await app.request("GET", "/v1/client/keys")
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const patched = await app.request("PATCH", `/v1/client/keys/${keys.json.items[0].id}`, { body: { label: "first key", webhook_url: url } })
    expect(patched.json.webhook_secret).toMatch(/^whsec_/)
    expect(patched.status).toBe(200)
  })
})

describe("HERALD_PROFILE=dev with HERALD_ENV=production", () => {
  it("stops start-up with one line naming both, before anything starts", async () => {
    const result = await runMain([], {
      DATABASE_URL: await freshDatabase(),
      HERALD_PROFILE: "dev",
      HERALD_ENV: "production",
      HERALD_BOOTSTRAP_KEY: newToken()
    })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split("\n")).toEqual([
      "herald: HERALD_PROFILE=dev is a local trial profile and cannot run with HERALD_ENV=production; " +
      "unset HERALD_PROFILE, or set HERALD_ENV=development for a trial"
    ])
    expect(result.stdout).toBe("")
  })
})
