/**
 * Console sign-in (issue 28): POST /console/session → 204 and the session cookie; a wrong email
 * and a wrong password alike; failures throttled per address and per account in counters of
 * their own (a Bearer client behind the same address is still served); at most two password
 * checks at once. Against a running appliance over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { consoleOrigin, cookieOf, newAccount, signIn, signInRequest, withCookie } from "../support/console-session.ts"

let app: Appliance
let strict: Appliance

beforeAll(async () => {
  // The address limit out of the way here: these tests are about the account's and the checks'.
  app = await startAppliance({ env: { HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS: "1000" } })
  strict = await startAppliance({
    // The Bearer side's limit as low: were sign-in failures counted there, a wrong token would get 429 below.
    env: { HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS: "5", HERALD_AUTH_FAILURES_PER_MIN: "5", HERALD_BASE_URL: "https://console.herald.test" }
  })
})
afterAll(async () => {
  await app?.stop()
  await strict?.stop()
})

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const timed = async (run: () => Promise<{ status: number; text: string }>) => {
  const started = performance.now()
  const res = await run()
  return { ...res, ms: performance.now() - started }
}

describe("sign-in", () => {
  it("answers 204 with an HttpOnly, SameSite=Strict session cookie for the whole origin, Secure only under https", async () => {
    const person = await newAccount(app)
    const res = await signInRequest(app, person.email.toUpperCase(), person.password)
    expect(res.status, res.text).toBe(204)
    const cookie = res.headers.get("set-cookie") ?? ""
    expect(cookie).toMatch(/^herald_session=[A-Za-z0-9_-]{43};/)
    expect(cookie).toMatch(/; HttpOnly/)
    expect(cookie).toMatch(/; SameSite=Strict/)
    expect(cookie).toMatch(/; Path=\//)
    expect(cookie).not.toMatch(/Secure/)
    expect(res.headers.get("cache-control")).toBe("no-store")

    const secure = await newAccount(strict)
    const overHttps = await signInRequest(strict, secure.email, secure.password)
    expect(overHttps.status, overHttps.text).toBe(204)
    expect(overHttps.headers.get("set-cookie")).toMatch(/; Secure/)
  })

  it("refuses a sign-in from another site's page (its Origin), so no site signs a visitor in to its own account", async () => {
    const person = await newAccount(app)
    const body = { email: person.email, password: person.password }
    const crossSite = await app.request("POST", "/console/session", { token: null, body, headers: { origin: "https://evil.example" } })
    expect(crossSite.status, crossSite.text).toBe(403)
    expect(crossSite.json.error).toMatchObject({ type: "permission_error", code: "forbidden" })
    expect(crossSite.headers.get("set-cookie")).toBeNull()
    const sameSite = await app.request("POST", "/console/session", { token: null, body, headers: { origin: consoleOrigin(app) } })
    expect(sameSite.status, sameSite.text).toBe(204)
  })

  it("makes a new session id at each sign-in, each one working", async () => {
    const person = await newAccount(app)
    const first = await signIn(app, person.email, person.password)
    const second = await signIn(app, person.email, person.password)
    expect(second.cookie).not.toBe(first.cookie)
    expect((await withCookie(app, first.cookie, "GET", "/console/session")).status).toBe(200)
    expect((await withCookie(app, second.cookie, "GET", "/console/session")).status).toBe(200)
  })

  it("answers a wrong email and a wrong password with the same 401, in about the same time", async () => {
    const person = await newAccount(app)
    const wrongPassword: Array<number> = []
    const wrongEmail: Array<number> = []
    const bodies = new Set<string>()
    // Alternating, so the machine's load falls on both alike; 8 stays under the account's limit of 10.
    for (let i = 0; i < 8; i++) {
      const byPassword = await timed(() => signInRequest(app, person.email, `not the password ${i}`))
      const byEmail = await timed(() => signInRequest(app, `nobody-${i}-${Date.now()}@console.test`, person.password))
      expect(byPassword.status).toBe(401)
      expect(byEmail.status).toBe(401)
      bodies.add(byPassword.text)
      bodies.add(byEmail.text)
      wrongPassword.push(byPassword.ms)
      wrongEmail.push(byEmail.ms)
    }
    expect([...bodies]).toEqual([
      JSON.stringify({ error: { type: "authentication_error", code: "unauthorized", message: "The email or password is wrong" } })
    ])
    // Without the dummy hash an unknown email skips scrypt (~1 ms instead of ~50 ms).
    const ratio = median(wrongEmail) / median(wrongPassword)
    console.log(`sign-in medians: wrong password ${median(wrongPassword).toFixed(1)} ms, wrong email ${median(wrongEmail).toFixed(1)} ms`)
    expect(ratio).toBeGreaterThan(0.6)
    expect(ratio).toBeLessThan(1.6)
  })

  it("throttles an account after 10 failures with 429 and Retry-After, even for the right password; other accounts sign in", async () => {
    const person = await newAccount(app)
    for (let i = 0; i < 10; i++) expect((await signInRequest(app, person.email, `guess ${i}`)).status).toBe(401)
    const refused = await signInRequest(app, person.email, person.password)
    expect(refused.status, refused.text).toBe(429)
    expect(refused.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800)
    // The email as typed counts, whatever its case.
    expect((await signInRequest(app, person.email.toUpperCase(), person.password)).status).toBe(429)
    const other = await newAccount(app)
    await signIn(app, other.email, other.password)
  })

  it("throttles an address after its limit of failures, and a Bearer client behind it is still served", async () => {
    const person = await newAccount(strict)
    for (let i = 0; i < 5; i++) expect((await signInRequest(strict, `stranger-${i}@console.test`, "guess guess")).status).toBe(401)
    const refused = await signInRequest(strict, person.email, person.password)
    expect(refused.status, refused.text).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800)
    // The Bearer side counts its own failures: keys keep working, and a wrong token is still a 401, not a 429.
    expect((await strict.request("GET", "/v1/client/keys", { token: person.token })).status).toBe(200)
    expect((await strict.request("GET", "/v1/client/keys", { token: "hrld_wrong" })).status).toBe(401)
    expect((await strict.request("GET", "/v1/admin/accounts")).status).toBe(200)
  })

  it("runs at most two password checks at once: a third concurrent sign-in gets 429 at once", async () => {
    const person = await newAccount(app)
    const started = performance.now()
    // Wrong passwords of a real account: each one a full scrypt check.
    const answers = await Promise.all([0, 1, 2].map((i) => timed(() => signInRequest(app, person.email, `busy guess ${i}`))))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses, JSON.stringify(answers)).toEqual([401, 401, 429])
    const busy = answers.find((a) => a.status === 429)!
    expect(JSON.parse(busy.text).error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    const slowest = Math.max(...answers.filter((a) => a.status === 401).map((a) => a.ms))
    expect(busy.ms).toBeLessThan(slowest)
    expect(performance.now() - started).toBeLessThan(10_000)
    // Once the checks are done, sign-in works again.
    await signIn(app, person.email, person.password)
  })

  it("refuses a body past its bounds with 400 naming the field, before any password check", async () => {
    const tooLong = await signInRequest(app, "someone@console.test", "p".repeat(1025))
    expect(tooLong.status, tooLong.text).toBe(400)
    expect(tooLong.json.error).toMatchObject({ code: "validation_failed", param: "password" })
    const withNul = await signInRequest(app, "some\u0000one@console.test", "a password")
    expect(withNul.status, withNul.text).toBe(400)
    expect(withNul.json.error).toMatchObject({ code: "validation_failed", param: "email" })
  })

  it("keeps the cookie value out of reach of the session route's bodies", async () => {
    const person = await newAccount(app)
    const res = await signInRequest(app, person.email, person.password)
    const cookie = cookieOf(res)
    const session = await withCookie(app, cookie, "GET", "/console/session")
    expect(session.text).not.toContain(cookie)
  })
})
