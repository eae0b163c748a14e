/**
 * Reputation: an account whose hard-bounce rate passes the threshold is paused (sends answer 403
 * sending_paused, sandbox too) until an admin lifts the pause.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Reputation } from "../../src/platform/reputation/Reputation.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
const env = { HERALD_REPUTATION_MIN_VOLUME: "10" }

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, ...env } })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

describe("reputation", () => {
  it("pauses an account past 5 % hard bounces until an admin lifts it", async () => {
    const sender = await newSender(app, dns, { packageId: "growth" })
    const sent = await app.request("POST", "/v1/mail/send", {
      token: sender.token,
      body: sendBody(sender, Array.from({ length: 10 }, (_, i) => `r${i}@example.org`).slice(0, 10), {
        personalizations: Array.from({ length: 10 }, (_, i) => ({ to: [{ email: `r${i}@example.org` }] }))
      })
    })
    expect(sent.status).toBe(202)
    // Outcomes as the MTA records them: nine delivered, one hard bounce (10 %).
    await query(app.databaseUrl, `UPDATE deliveries SET state = CASE WHEN recipient = 'r0@example.org' THEN 'bounced' ELSE 'sent' END,
      completed_at = now() WHERE account_id = $1`, [sender.accountId])
    await query(app.databaseUrl, `INSERT INTO events (id, account_id, key_id, event, payload, created_at)
      VALUES ('evt_rep1', $1, $2, 'email.bounced', '{"category":"hard","status":"5.1.1"}', now())`, [sender.accountId, sender.keyId])
    const now = new Date()
    await withServices(app, Effect.flatMap(Reputation, (r) => r.sweep(now, new Date(now.getTime() - 60_000))), env)

    const paused = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "next@example.org") })
    expect(paused.status).toBe(403)
    expect(paused.json.error.code).toBe("sending_paused")
    expect(paused.json.error.message).toContain("hard-bounce rate 10.00%")
    const sandbox = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "next@example.org"), headers: { "X-Herald-Test": "1" } })
    expect(sandbox.status).toBe(403)
    const account = await app.request("GET", `/v1/admin/accounts/${sender.accountId}`)
    expect(account.json.sending_paused_reason).toContain("hard-bounce")

    expect((await app.request("POST", `/v1/admin/accounts/${sender.accountId}/unpause`)).status).toBe(200)
    expect((await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "next@example.org") })).status).toBe(202)
    // The same old bounces do not pause it again: the window restarted at the unpause.
    await withServices(app, Effect.flatMap(Reputation, (r) => r.evaluate(sender.accountId, new Date())), env)
    expect((await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "again@example.org") })).status).toBe(202)
  })
})
