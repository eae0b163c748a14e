/**
 * An operator's trust of a domain without DNS (CLI and admin API), and the start-up warnings about
 * a configuration whose DNS records cannot work. One appliance process, so its logs can be read:
 * a bare HERALD_HOSTNAME and a smarthost without an SPF include, and a DNS server that holds
 * nothing at all (no record was ever published for these domains).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Domains } from "../../src/platform/domains/Domains.ts"
import { type ApplianceProcess, runMain, spawnAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { eventually } from "../support/eventually.ts"

let app: ApplianceProcess
let dns: DnsServer
let accountId: string
let token: string

const env = () => ({ HERALD_DNS_SERVERS: dns.address, HERALD_HOSTNAME: "heraldbox", HERALD_SMARTHOST: "smtp://relay.example:587" })

beforeAll(async () => {
  dns = await startDnsServer()
  app = await spawnAppliance({ env: env() })
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: { name: "Lab", email: "lab@customers.test", password: "correct horse battery", package_id: "growth" }
  })
  expect(account.status).toBe(201)
  accountId = account.json.id
  token = (await app.request("POST", `/v1/admin/accounts/${accountId}/keys`, { body: { label: "lab" } })).json.token
  for (const domain of ["api-trusted.example", "cli-trusted.example", "untrusted.example"]) {
    expect((await app.request("POST", "/v1/client/domains", { token, body: { domain } })).status).toBe(201)
  }
}, 120_000)
afterAll(async () => {
  await app?.stop()
  await dns?.close()
})

/** Waits until the appliance's output has a line matching `pattern`, and returns it. */
const logLine = (pattern: RegExp) =>
  eventually(async () => app.output().split("\n").find((l) => pattern.test(l)), `a log line matching ${pattern}`)

const domainView = async (domain: string) => (await app.request("GET", `/v1/client/domains/${domain}`, { token })).json
const send = (domain: string) =>
  app.request("POST", "/v1/mail/send", {
    token,
    body: {
      personalizations: [{ to: [{ email: "someone@example.org" }] }],
      from: { email: `hello@${domain}` },
      subject: "Hello",
      content: [{ type: "text/plain", value: "Hello" }]
    }
  })

describe("start-up warnings about DNS records that cannot work", () => {
  it("warns about a smarthost without an SPF include; a bare HERALD_HOSTNAME only in production (this is development)", async () => {
    expect(await logLine(/HERALD_SMARTHOST is set without HERALD_SMARTHOST_SPF_INCLUDE/)).toMatch(/WARN/i)
    expect(app.output()).not.toMatch(/is a bare machine name/)
  })
})

describe("operator trust", () => {
  it("refuses a non-admin key (403), an unknown account or domain (404)", async () => {
    const refused = await app.request("POST", `/v1/admin/accounts/${accountId}/domains/api-trusted.example/trust`, { token })
    expect(refused.status).toBe(403)
    expect((await domainView("api-trusted.example")).verified).toBe(false)
    expect((await app.request("POST", "/v1/admin/accounts/acc_nobody/domains/api-trusted.example/trust")).status).toBe(404)
    expect((await app.request("POST", `/v1/admin/accounts/${accountId}/domains/nobody.example/trust`)).status).toBe(404)
  })

  it("marks a domain verified by the operator through the admin API, logged as a warning, and it may send", async () => {
    expect((await send("api-trusted.example")).status).toBe(403)
    const trusted = await app.request("POST", `/v1/admin/accounts/${accountId}/domains/API-Trusted.example/trust`)
    expect(trusted.status).toBe(200)
    expect(trusted.json).toMatchObject({ domain: "api-trusted.example", verified: true, verified_by: "operator" })
    expect(Date.parse(trusted.json.verified_at)).not.toBeNaN()
    expect(await domainView("api-trusted.example")).toMatchObject({ verified: true, verified_by: "operator" })
    expect((await domainView("untrusted.example")).verified_by).toBeNull()
    const line = await logLine(/domain trusted by an operator/)
    expect(line).toMatch(/WARN/i)
    expect(line).toContain("api-trusted.example")
    expect(line).toContain(accountId)
    expect((await send("api-trusted.example")).status).toBe(202)
  })

  it("marks a domain verified by the operator through `herald domains trust`", async () => {
    const result = await runMain(["domains", "trust", "--account", accountId, "--domain", "cli-trusted.example"], {
      DATABASE_URL: app.databaseUrl
    }, 240_000)
    expect(result.code, result.stderr).toBe(0)
    const output = `${result.stdout}\n${result.stderr}`
    expect(output).toMatch(/WARN.*domain trusted by an operator.*cli-trusted\.example/i)
    expect(JSON.parse(result.stdout.slice(result.stdout.indexOf("{\n")))).toMatchObject({
      domain: "cli-trusted.example",
      verified: true,
      verified_by: "operator"
    })
    expect(await domainView("cli-trusted.example")).toMatchObject({ verified: true, verified_by: "operator" })
    const unknown = await runMain(["domains", "trust", "--account", accountId, "--domain", "nobody.example"], {
      DATABASE_URL: app.databaseUrl
    }, 240_000)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('"code":"not_found"')
  }, 300_000)

  it("leaves operator-trusted domains out of the periodic re-check, though no TXT record exists", async () => {
    // The appliance's own re-check job runs at start; drive one far in the future here.
    const later = new Date(Date.now() + 30 * 24 * 3_600_000)
    await withServices(app, Effect.flatMap(Domains, (d) => d.recheck(later, later)), env())
    const rows = await query<{ domain: string; verification_lost_at: Date | null; last_checked_at: Date | null }>(
      app.databaseUrl,
      "SELECT domain, verification_lost_at, last_checked_at FROM domains WHERE verified_by = 'operator' ORDER BY domain"
    )
    expect(rows.map((r) => r.domain)).toEqual(["api-trusted.example", "cli-trusted.example"])
    for (const row of rows) {
      expect(row.verification_lost_at).toBeNull()
      expect(row.last_checked_at).toBeNull()
    }
    expect((await send("api-trusted.example")).status).toBe(202)
  })
})
