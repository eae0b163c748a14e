/**
 * Bearer authentication on /v1/, the throttle on failed authentications per client address (which
 * stops guesses, not the customers who share the address: issue #26), and the public paths that need no key (DESIGN.md "Public paths").
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiResponse, type Appliance, newToken, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"

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
const getKeysFrom = (from: string, token: string, agent: http.Agent | false = false) =>
  new Promise<{ status: number; retryAfter: string | undefined; json: { error?: { type: string; code: string } } }>((resolve, reject) => {
    const request = http.request(`${app.baseUrl}/v1/client/keys`, {
      localAddress: from,
      headers: { authorization: `Bearer ${token}` },
      agent
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
  it("answers 429 with Retry-After past 20 failures of one address, to its wrong tokens only, while other addresses authenticate", async () => {
    const prober = "127.0.0.3"
    for (let i = 0; i < 20; i++) expect((await getKeysFrom(prober, newToken())).status).toBe(401)
    const refused = await getKeysFrom(prober, newToken())
    expect(refused.status).toBe(429)
    expect(refused.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    const retryAfter = Number(refused.retryAfter)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    // Throttling stops guesses, not customers: a good key from that address is still served.
    expect((await getKeysFrom(prober, app.adminToken)).status).toBe(200)
    expect((await getKeysFrom(prober, newToken())).status).toBe(429)

    // Another address is a client of its own: its good key works, its wrong one is a plain 401.
    expect((await getKeysFrom("127.0.0.4", app.adminToken)).status).toBe(200)
    expect((await getKeysFrom("127.0.0.4", newToken())).status).toBe(401)
  })
})

/** The times PostgreSQL has read api_keys (every key lookup reads it once), as its statistics say. */
const keyTableScans = async () => {
  const rows = await query<{ n: string }>(
    app.databaseUrl,
    "SELECT (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text AS n FROM pg_stat_user_tables WHERE relname = 'api_keys'"
  )
  return Number(rows[0]!.n)
}
/** A backend sends its statistics when idle for at most this long (PostgreSQL's idle stats update timeout is 10 s). */
const STATS_FLUSH_MS = 11_000

/** Throttles `from`: 20 wrong tokens, each a 401. */
const throttle = async (from: string) => {
  for (let i = 0; i < 20; i++) expect((await getKeysFrom(from, newToken())).status).toBe(401)
}

describe("a throttled address's customers (behind a reverse proxy they all share it)", () => {
  it("serves a valid key the key cache knows, without waiting for the address's minute to end", async () => {
    const proxy = "127.0.0.5"
    // The customer's key was used a moment ago (it is in the cache).
    expect((await getKeysFrom(proxy, app.adminToken)).status).toBe(200)
    await throttle(proxy)
    // A wrong token takes the address's one lookup of this second and is refused; the customer is not.
    expect((await getKeysFrom(proxy, newToken())).status).toBe(429)
    expect((await getKeysFrom(proxy, app.adminToken)).status).toBe(200)
    expect((await getKeysFrom(proxy, newToken())).status).toBe(429)
  })

  it("serves a valid key the cache does not know within the address's lookup allowance, one a second", async () => {
    const proxy = "127.0.0.6"
    const created = await app.request("POST", "/v1/client/keys", { body: { label: "behind the proxy" } })
    expect(created.status).toBe(201)
    const fresh: string = created.json.token
    await throttle(proxy)
    // This second's lookup goes to a wrong token; the new key, which nobody has used yet, waits its turn.
    expect((await getKeysFrom(proxy, newToken())).status).toBe(429)
    const waiting = await getKeysFrom(proxy, fresh)
    expect(waiting.status).toBe(429)
    expect(Number(waiting.retryAfter)).toBeGreaterThanOrEqual(1)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect((await getKeysFrom(proxy, fresh)).status).toBe(200)
    // Found once, it is known (cached, and recognized as valid): served at once from then on.
    for (let i = 0; i < 3; i++) {
      expect((await getKeysFrom(proxy, newToken())).status).toBe(429)
      expect((await getKeysFrom(proxy, fresh)).status).toBe(200)
    }
  })

  it("answers 2,000 wrong tokens from a throttled address with 429 at a bounded number of database lookups", async () => {
    const prober = "127.0.0.7"
    await throttle(prober)
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS))
    const before = await keyTableScans()
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16, localAddress: prober } as http.AgentOptions)
    const started = Date.now()
    try {
      const statuses = await Promise.all(Array.from({ length: 2_000 }, () => getKeysFrom(prober, newToken(), agent).then((r) => r.status)))
      expect(new Set(statuses)).toEqual(new Set([429]))
    } finally {
      agent.destroy()
    }
    const seconds = (Date.now() - started) / 1000
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS))
    const lookups = (await keyTableScans()) - before
    // One a second (THROTTLED_LOOKUP_INTERVAL_MS), and a few reads of the table by other work.
    expect(lookups).toBeLessThanOrEqual(Math.ceil(seconds) + 5)
  }, 120_000)
})

describe("public paths", () => {
  const publicPaths = [
    "/version",
    "/health",
    "/openapi/openapi.transactional.json",
    "/openapi/openapi.bulk.json",
    "/openapi/openapi.platform.json",
    "/docs.json",
    "/openapi/openapi.yaml",
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
