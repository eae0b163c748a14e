/**
 * Limits an operator sets for the appliance hold for the appliance when it runs as several
 * processes on one database (issue 33): two spawned replicas, requests alternating between them.
 * - HERALD_AUTH_FAILURES_PER_MIN: N wrong tokens split over both replicas and over the API,
 *   /metrics and SMTP submission are the address's N; the next is refused (429, 421) by both.
 * - The console's sign-in failures: an email's 10 guesses are 10 over both replicas, and an
 *   address's HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS likewise.
 * - HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: an address's messages over both replicas' MX
 *   listeners are its limit, once the replicas have synced their counts (every SYNC_MS).
 * Without PostgreSQL holding the counts, each replica would allow its own N (twice as many).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ACCOUNT_FAILURES_PER_WINDOW } from "../../src/api/console/sign-in-throttle.ts"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { signInRequest } from "../support/console-session.ts"
import { freshDatabase } from "../support/database.ts"
import { sendRaw } from "../support/smtp-client.ts"
import { authPlain, openDialog } from "../support/smtp-dialog.ts"
import { SYNC_MS } from "../../src/inbound/listener/rate.ts"

const LIMIT = 4
const METRICS_TOKEN = "metrics-token-0123456789abcdef"
const SIGNIN_PER_ADDRESS = ACCOUNT_FAILURES_PER_WINDOW + 2
let a: ApplianceProcess
let b: ApplianceProcess

beforeAll(async () => {
  const databaseUrl = await freshDatabase()
  const env = {
    HERALD_AUTH_FAILURES_PER_MIN: String(LIMIT),
    HERALD_METRICS_TOKEN: METRICS_TOKEN,
    HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS: String(SIGNIN_PER_ADDRESS),
    HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: String(LIMIT),
    HERALD_INBOUND_ENABLED: "false"
  }
  a = await spawnAppliance({ databaseUrl, env })
  b = await spawnAppliance({ databaseUrl, env, bootstrapKey: a.adminToken })
}, 120_000)
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
})

const scrape = (app: ApplianceProcess, token: string) => fetch(`${app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })

/** The reply to AUTH PLAIN with `token` on `app`'s submission port (after EHLO). */
const authReply = async (app: ApplianceProcess, token: string): Promise<string> => {
  const dialog = await openDialog(app.submissionPort)
  try {
    await dialog.command("EHLO app.test")
    return await dialog.command(authPlain(token))
  } finally {
    dialog.destroy()
  }
}

describe("two replicas on one database", () => {
  it("allow an address HERALD_AUTH_FAILURES_PER_MIN failed authentications in all, whichever replica and protocol", async () => {
    // The admin key is valid on both (and stays served past the limit: valid keys are not throttled).
    for (const app of [a, b]) expect((await app.request("GET", "/v1/admin/accounts")).status).toBe(200)
    const wrong = (i: number) => `hrld_wrong_${i}_0123456789abcdef0123456789`
    expect((await a.request("GET", "/v1/client/keys", { token: wrong(1) })).status).toBe(401)
    expect(await authReply(b, wrong(2))).toMatch(/^535 5\.7\.8/)
    expect((await scrape(a, wrong(3))).status).toBe(401)
    expect((await b.request("GET", "/v1/client/keys", { token: wrong(4) })).status).toBe(401)
    // LIMIT failures, two on each replica: the next wrong token is refused wherever it goes.
    const api = await a.request("GET", "/v1/client/keys", { token: wrong(5) })
    expect(api.status).toBe(429)
    expect(api.json.error.code).toBe("rate_limit_exceeded")
    expect(Number(api.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await b.request("GET", "/v1/client/keys", { token: wrong(6) })).status).toBe(429)
    expect((await scrape(b, wrong(7))).status).toBe(429)
    for (const app of [a, b]) expect(await authReply(app, wrong(8))).toMatch(/^421 4\.7\.0 Too many failed authentications/)
    for (const app of [a, b]) expect((await app.request("GET", "/v1/admin/accounts")).status).toBe(200)
    expect((await scrape(b, METRICS_TOKEN)).status).toBe(200)
  }, 30_000)

  it("allow an email ten failed console sign-ins in all, and an address its limit, whichever replica", async () => {
    const guess = (app: ApplianceProcess, email: string) => signInRequest(app, email, "wrong password guess")
    for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW; i++) expect((await guess(i % 2 === 0 ? a : b, "ops@victim.test")).status).toBe(401)
    for (const app of [a, b]) expect((await guess(app, "OPS@victim.test")).status).toBe(429)
    // The address has ten failures; two more (other emails, one on each replica) reach its limit.
    expect((await guess(a, "one@other.test")).status).toBe(401)
    expect((await guess(b, "two@other.test")).status).toBe(401)
    for (const app of [a, b]) expect((await guess(app, "three@other.test")).status).toBe(429)
  }, 30_000)

  it("allow an address HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP messages in all at their MX listeners", async () => {
    const send = (app: ApplianceProcess, n: number) =>
      sendRaw(app.smtpPort, { from: "", to: ["postmaster@bounces.herald.test"] }, `Subject: flood ${n}\r\n\r\nagain\r\n`, "127.0.0.5")
    for (let n = 0; n < LIMIT; n++) expect((await send(n % 2 === 0 ? a : b, n)).code).toBe(250)
    await new Promise((resolve) => setTimeout(resolve, 2 * SYNC_MS))
    for (const app of [a, b]) {
      const refused = await send(app, LIMIT)
      expect(refused.code).toBe(451)
      expect(refused.text).toContain("4.7.1")
    }
    // Another address is not affected.
    expect((await sendRaw(a.smtpPort, { from: "", to: ["postmaster@bounces.herald.test"] }, "Subject: calm\r\n\r\nonce\r\n", "127.0.0.6")).code).toBe(250)
  }, 30_000)
})
