/**
 * Bearer authentication on /v1/, the throttle on failed authentications per client address, and
 * the public paths that need no key (DESIGN.md "Public paths").
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiResponse, type Appliance, newToken, startAppliance } from "../support/appliance.ts"

let app: Appliance
beforeAll(async () => {
  app = await startAppliance()
})
afterAll(() => app.stop())

const expectUnauthorized = (res: ApiResponse) => {
  expect(res.status).toBe(401)
  expect(res.json).toEqual({
    error: { type: "authentication_error", code: "unauthorized", message: expect.any(String) }
  })
  expect(res.json.error.message.length).toBeGreaterThan(0)
}

describe("authentication on /v1/", () => {
  it("answers 401 in the error envelope when the Authorization header is missing", async () => {
    expectUnauthorized(await app.request("GET", "/v1/client/keys", { token: null }))
  })

  it("answers 401 when the scheme is not Bearer", async () => {
    const basic = Buffer.from(`user:${app.adminToken}`).toString("base64")
    expectUnauthorized(await app.request("GET", "/v1/client/keys", { token: null, headers: { authorization: `Basic ${basic}` } }))
    expectUnauthorized(await app.request("GET", "/v1/client/keys", { token: null, headers: { authorization: app.adminToken } }))
  })

  it("answers 401 for a well-formed token that no key has", async () => {
    expectUnauthorized(await app.request("GET", "/v1/client/keys", { token: newToken() }))
  })

  it("answers 401 for a token that differs from a real one in its last character only", async () => {
    const last = app.adminToken.slice(-1) === "a" ? "b" : "a"
    expectUnauthorized(await app.request("GET", "/v1/client/keys", { token: `${app.adminToken.slice(0, -1)}${last}` }))
  })

  it("answers 401 on a write too, before looking at the body", async () => {
    expectUnauthorized(await app.request("POST", "/v1/client/keys", { token: null, body: { label: "x" } }))
  })

  it("accepts the bootstrap key", async () => {
    const res = await app.request("GET", "/v1/client/keys")
    expect(res.status).toBe(200)
    expect(res.json.items.map((k: { label: string }) => k.label)).toContain("bootstrap")
  })
})

/**
 * GET /v1/client/keys from the loopback address `from` (all of 127/8 is the loopback interface):
 * how a test is several clients at once.
 */
const getKeysFrom = (from: string, token: string) =>
  new Promise<{ status: number; retryAfter: string | undefined; json: { error?: { type: string; code: string } } }>((resolve, reject) => {
    const request = http.request(`${app.baseUrl}/v1/client/keys`, {
      localAddress: from,
      headers: { authorization: `Bearer ${token}` },
      agent: false
    }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString()))
      response.on("end", () => {
        const retryAfter = response.headers["retry-after"]
        resolve({ status: response.statusCode ?? 0, retryAfter, json: JSON.parse(text) })
      })
    })
    request.once("error", reject)
    request.end()
  })

describe("failed authentications per client address (HERALD_AUTH_FAILURES_PER_MIN, 20 by default)", () => {
  it("answers 429 with Retry-After past 20 failures of one address, even to a good key, while other addresses authenticate", async () => {
    const prober = "127.0.0.3"
    for (let i = 0; i < 20; i++) expect((await getKeysFrom(prober, newToken())).status).toBe(401)
    const refused = await getKeysFrom(prober, newToken())
    expect(refused.status).toBe(429)
    expect(refused.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    const retryAfter = Number(refused.retryAfter)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    // The token is not looked at: a good key from that address waits too.
    expect((await getKeysFrom(prober, app.adminToken)).status).toBe(429)

    // Another address is a client of its own: its good key works, its wrong one is a plain 401.
    expect((await getKeysFrom("127.0.0.4", app.adminToken)).status).toBe(200)
    expect((await getKeysFrom("127.0.0.4", newToken())).status).toBe(401)
  })
})

describe("public paths", () => {
  const publicPaths = [
    "/version",
    "/health",
    "/openapi/openapi.transactional.json",
    "/openapi/openapi.bulk.json",
    "/openapi/openapi.platform.json",
    "/docs.json",
    "/reference/transactional/",
    "/reference/bulk/",
    "/reference/platform/",
    "/llms.txt",
    "/llms-full.txt"
  ]

  it.each(publicPaths)("serves %s with 200 and no key", async (route) => {
    const res = await app.request("GET", route, { token: null })
    expect(res.status).toBe(200)
    expect(res.text.length).toBeGreaterThan(0)
  })

  it("serves the public paths even when an invalid key is sent", async () => {
    for (const route of ["/version", "/health", "/docs.json"]) {
      expect((await app.request("GET", route, { token: newToken() })).status).toBe(200)
    }
  })
})
