/**
 * The console's session (issue 28) against a running appliance over HTTP: GET, PATCH (the key
 * switch) and DELETE /console/session; /v1 with the cookie as the session's active key, Bearer
 * winning over it, admin routes for an admin's session only; the CSRF rule for unsafe methods; a
 * session ended by sign-out, suspension and idleness.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { consoleOrigin, newAccount, signIn, signInRequest, withCookie } from "../support/console-session.ts"
import { sleep } from "../support/net.ts"

const ADMIN_PASSWORD = "the admin's console passphrase"

let app: Appliance
let origin: string

beforeAll(async () => {
  app = await startAppliance({ env: { HERALD_BOOTSTRAP_PASSWORD: ADMIN_PASSWORD } })
  origin = consoleOrigin(app)
})
afterAll(() => app?.stop())

describe("the session routes", () => {
  it("GET answers the account, its active keys and the session's key and CSRF token; 401 without a session", async () => {
    const person = await newAccount(app)
    const session = await signIn(app, person.email, person.password)
    const res = await withCookie(app, session.cookie, "GET", "/console/session")
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      account: { id: person.id, name: expect.any(String), email: person.email, is_admin: false },
      keys: [{ id: person.keyId, label: "first" }],
      active_key_id: person.keyId,
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)
    })
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(res.headers.get("cache-control")).toBe("no-store")
    const none = await app.request("GET", "/console/session", { token: null })
    expect(none.status).toBe(401)
    expect(none.json.error).toMatchObject({ type: "authentication_error", code: "unauthorized" })
    expect((await withCookie(app, "made-up", "GET", "/console/session")).status).toBe(401)
  })

  it("PATCH switches to another of the account's active keys, and /v1 then acts as it; another account's key → 400", async () => {
    const person = await newAccount(app)
    const second = await app.request("POST", `/v1/admin/accounts/${person.id}/keys`, { body: { label: "second" } })
    const session = await signIn(app, person.email, person.password)
    const write = { csrf: session.csrf, origin }
    const made = await withCookie(app, session.cookie, "POST", "/v1/bulk/templates", { ...write, body: { name: "A", subject: "s", body_text: "b" } })
    expect(made.status, made.text).toBe(201)

    const switched = await withCookie(app, session.cookie, "PATCH", "/console/session", { ...write, body: { active_key_id: second.json.id } })
    expect(switched.status, switched.text).toBe(200)
    expect(switched.json.active_key_id).toBe(second.json.id)
    // Bulk templates belong to keys: the first key's is not the second's.
    const listed = await withCookie(app, session.cookie, "GET", "/v1/bulk/templates")
    expect(listed.status).toBe(200)
    expect(listed.json.items).toEqual([])
    const byFirst = await app.request("GET", "/v1/bulk/templates", { token: person.token })
    expect(byFirst.json.items.map((t: { id: string }) => t.id)).toEqual([made.json.id])

    const stranger = await newAccount(app)
    for (const keyId of [stranger.keyId, "key_unknown"]) {
      const refused = await withCookie(app, session.cookie, "PATCH", "/console/session", { ...write, body: { active_key_id: keyId } })
      expect(refused.status, refused.text).toBe(400)
      expect(refused.json.error).toMatchObject({ code: "validation_failed", param: "active_key_id" })
    }
    expect((await withCookie(app, session.cookie, "GET", "/console/session")).json.active_key_id).toBe(second.json.id)
  })

  it("DELETE signs out: the old cookie gets 401 on /v1 and on /console/session", async () => {
    const person = await newAccount(app)
    const session = await signIn(app, person.email, person.password)
    expect((await withCookie(app, session.cookie, "GET", "/v1/client/keys")).status).toBe(200)
    const out = await withCookie(app, session.cookie, "DELETE", "/console/session", { csrf: session.csrf, origin })
    expect(out.status, out.text).toBe(204)
    expect(out.headers.get("set-cookie")).toMatch(/herald_session=; Max-Age=0/)
    const v1 = await withCookie(app, session.cookie, "GET", "/v1/client/keys")
    expect(v1.status).toBe(401)
    expect(v1.json.error).toMatchObject({ type: "authentication_error", code: "unauthorized" })
    expect((await withCookie(app, session.cookie, "GET", "/console/session")).status).toBe(401)
  })

  it("a suspension ends the account's sessions", async () => {
    const person = await newAccount(app)
    const session = await signIn(app, person.email, person.password)
    expect((await app.request("POST", `/v1/admin/accounts/${person.id}/suspend`)).status).toBe(200)
    expect((await withCookie(app, session.cookie, "GET", "/console/session")).status).toBe(401)
    expect((await withCookie(app, session.cookie, "GET", "/v1/client/keys")).status).toBe(401)
    // A suspended account signs in to nothing; only the right password learns why.
    const suspended = await signInRequest(app, person.email, person.password)
    expect(suspended.status).toBe(403)
    expect(suspended.json.error).toMatchObject({ type: "permission_error", code: "account_suspended" })
    expect(suspended.headers.get("set-cookie")).toBeNull()
    expect((await signInRequest(app, person.email, "not the password")).status).toBe(401)
    // Unsuspending brings no session back; signing in again works.
    expect((await app.request("POST", `/v1/admin/accounts/${person.id}/unsuspend`)).status).toBe(200)
    expect((await withCookie(app, session.cookie, "GET", "/console/session")).status).toBe(401)
    await signIn(app, person.email, person.password)
  })
})

describe("sessions of one account", () => {
  it("keeps at most 20: a sign-in past them ends the longest idle", async () => {
    const person = await newAccount(app)
    const oldest = await signIn(app, person.email, person.password)
    const others = []
    for (let i = 0; i < 20; i++) others.push(await signIn(app, person.email, person.password))
    expect((await withCookie(app, oldest.cookie, "GET", "/console/session")).status).toBe(401)
    for (const session of [others[0]!, others.at(-1)!]) {
      expect((await withCookie(app, session.cookie, "GET", "/console/session")).status).toBe(200)
    }
  }, 120_000)
})

describe("CSRF", () => {
  it("refuses a cookie request other than GET/HEAD without the session's X-Herald-CSRF or the base URL's Origin (403); with both it works", async () => {
    const person = await newAccount(app)
    const session = await signIn(app, person.email, person.password)
    const body = { label: "made in the console" }
    const attempts = [
      { what: "no header, no Origin", options: {} },
      { what: "no header", options: { origin } },
      { what: "a wrong token", options: { csrf: "x".repeat(43), origin } },
      { what: "another site's Origin", options: { csrf: session.csrf, origin: "https://evil.example" } },
      { what: "no Origin", options: { csrf: session.csrf } }
    ]
    for (const attempt of attempts) {
      const res = await withCookie(app, session.cookie, "POST", "/v1/client/keys", { ...attempt.options, body })
      expect(res.status, attempt.what).toBe(403)
      expect(res.json.error, attempt.what).toMatchObject({ type: "permission_error", code: "forbidden" })
    }
    const keys = await app.request("GET", "/v1/client/keys", { token: person.token })
    expect(keys.json.items).toHaveLength(1)

    const made = await withCookie(app, session.cookie, "POST", "/v1/client/keys", { csrf: session.csrf, origin, body })
    expect(made.status, made.text).toBe(201)
    // The session routes follow the same rule.
    expect((await withCookie(app, session.cookie, "PATCH", "/console/session", { origin, body: { active_key_id: made.json.id } })).status).toBe(403)
    expect((await withCookie(app, session.cookie, "DELETE", "/console/session", { csrf: session.csrf })).status).toBe(403)
    expect((await withCookie(app, session.cookie, "GET", "/console/session")).status).toBe(200)
  })
})

describe("/v1 with the cookie", () => {
  it("a Bearer header wins over the cookie, even a wrong one", async () => {
    const admin = await signIn(app, "admin@herald.test", ADMIN_PASSWORD)
    const person = await newAccount(app)
    const asPerson = await withCookie(app, admin.cookie, "GET", "/v1/admin/accounts", { token: person.token })
    expect(asPerson.status).toBe(403)
    const wrong = await withCookie(app, admin.cookie, "GET", "/v1/client/keys", { token: "hrld_wrong" })
    expect(wrong.status).toBe(401)
  })

  it("an admin's session reaches the admin routes; another account's gets 403", async () => {
    const admin = await signIn(app, "admin@herald.test", ADMIN_PASSWORD)
    expect((await withCookie(app, admin.cookie, "GET", "/v1/admin/accounts")).status).toBe(200)
    const person = await newAccount(app)
    const session = await signIn(app, person.email, person.password)
    const refused = await withCookie(app, session.cookie, "GET", "/v1/admin/accounts")
    expect(refused.status).toBe(403)
    expect(refused.json.error).toMatchObject({ type: "permission_error", code: "forbidden" })
  })

  it("a session whose key was revoked is told to switch (403) until it does", async () => {
    const person = await newAccount(app)
    const second = await app.request("POST", `/v1/admin/accounts/${person.id}/keys`, { body: { label: "second" } })
    const session = await signIn(app, person.email, person.password)
    expect((await app.request("DELETE", `/v1/client/keys/${person.keyId}`, { token: second.json.token })).status).toBe(200)
    const refused = await withCookie(app, session.cookie, "GET", "/v1/client/keys")
    expect(refused.status).toBe(403)
    const view = await withCookie(app, session.cookie, "GET", "/console/session")
    expect(view.json.keys).toEqual([{ id: second.json.id, label: "second" }])
    await withCookie(app, session.cookie, "PATCH", "/console/session", { csrf: session.csrf, origin, body: { active_key_id: second.json.id } })
    expect((await withCookie(app, session.cookie, "GET", "/v1/client/keys")).status).toBe(200)
  })
})

describe("idle expiry", () => {
  it("ends a session unused for HERALD_CONSOLE_SESSION_IDLE_HOURS, and keeps one in use", async () => {
    // 0.001 h = 3.6 s; a session in use records so every 1.8 s here (half the idle time).
    const brief = await startAppliance({ env: { HERALD_CONSOLE_SESSION_IDLE_HOURS: "0.001" } })
    try {
      const person = await newAccount(brief)
      const idle = await signIn(brief, person.email, person.password)
      const busy = await signIn(brief, person.email, person.password)
      for (let i = 0; i < 5; i++) {
        await sleep(1_000)
        expect((await withCookie(brief, busy.cookie, "GET", "/console/session")).status, `busy after ${i + 1} s`).toBe(200)
      }
      expect((await withCookie(brief, idle.cookie, "GET", "/console/session")).status).toBe(401)
      expect((await withCookie(brief, idle.cookie, "GET", "/v1/client/keys")).status).toBe(401)
    } finally {
      await brief.stop()
    }
  })
})
