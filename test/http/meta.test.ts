import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, repoRoot, startAppliance } from "../support/appliance.ts"

let app: Appliance
beforeAll(async () => {
  app = await startAppliance()
})
afterAll(() => app.stop())

describe("service meta", () => {
  it("answers GET /version with package.json's semantic version, without a key", async () => {
    const pkg = JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, "utf8"))
    const res = await app.request("GET", "/version", { token: null })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ version: pkg.version })
    expect(res.json.version).toMatch(/^\d+\.\d+\.\d+$/)
  })

  it("answers GET /health with 200 while the database answers, without a key", async () => {
    const res = await app.request("GET", "/health", { token: null })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ status: "ok", database: "ok" })
  })

  it("gives every response an X-Request-Id, errors included", async () => {
    const ok = await app.request("GET", "/version", { token: null })
    const missing = await app.request("GET", "/v1/nothing-here", { token: null })
    expect(ok.headers.get("x-request-id")).toMatch(/^req_[A-Za-z0-9]{20}$/)
    expect(missing.headers.get("x-request-id")).toMatch(/^req_[A-Za-z0-9]{20}$/)
    expect(ok.headers.get("x-request-id")).not.toBe(missing.headers.get("x-request-id"))
  })
})
