/**
 * Issue 26, finding 2 (JSON import): a 10 MB JSON import of 80,002 contacts held the appliance's
 * main thread for 0.5 s on a quiet machine and 5–7 s on a loaded one (JSON.parse, the schema's
 * decode and gathering the rows, in one go), so one request froze every other account's. Now the
 * body is parsed, decoded and gathered in the import workers (src/bulk/contacts/import-read.ts),
 * under their deadline and fair shares, and only the INSERT's batch texts come back. Against a
 * running appliance: while the import runs `/health` answers fast and another account's send is
 * accepted, and the import's answers are the ones the main thread gave.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiResponse, type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { expectResponsive, probeImport } from "../support/health-probe.ts"
import { newSender, type Sender } from "../support/sending.ts"

// The appliance runs as its own process: a freeze of its event loop shows in `/health`'s answer
// time alone, not mixed with this process's work of building and sending the body.
let setup: { app: ApplianceProcess; dns: DnsServer; sender: Sender }

beforeAll(async () => {
  const dns = await startDnsServer()
  const app = await spawnAppliance({ env: { HERALD_DNS_SERVERS: dns.address }, waitMs: 180_000 })
  setup = { app, dns, sender: await newSender(app, dns, { packageId: "growth" }) }
  // The readers start at the first import: started here, so that the measure sees the import.
  const warm = await importJson({ contacts: [{ email: "warm-up@example.org" }] }, (await newSender(setup.app, setup.dns)).token)
  expect(warm.status).toBe(200)
})
afterAll(async () => {
  await setup.app.stop()
  await setup.dns.close()
})

const importJson = (body: unknown, token: string) =>
  setup.app.request("POST", "/v1/bulk/contacts/import", { token, rawBody: typeof body === "string" ? body : JSON.stringify(body) })

const contactsOf = async (keyId: string) =>
  (await query<{ n: number }>(setup.app.databaseUrl, "SELECT count(*)::int AS n FROM contacts WHERE key_id = $1", [keyId]))[0]!.n

/**
 * Runs `work` while `/health` is asked every 25 ms and, once it is under way, the other account
 * sends one message (the rule: `expectResponsive`, test/support/health-probe.ts); `/health` at rest
 * is printed beside it (a loaded machine's scheduling delays are not the import's).
 */
const whileRunning = (work: () => Promise<ApiResponse>) => probeImport(setup.app, { sender: setup.sender, to: "friend@example.org" }, work)

/** The body: 80,002 contacts with a name, two tags and two metadata fields, about 10 MB. */
const bigImport = () => ({
  contacts: Array.from({ length: 80_002 }, (_, i) => ({
    email: `json-contact-${String(i).padStart(6, "0")}@example.org`,
    name: `Contact number ${i}`,
    tags: ["imported", `cohort-${i % 17}`],
    metadata: { plan: i % 3 === 0 ? "pro" : "free", city: `City of the contact ${i % 101}`, n: i }
  })),
  tags: ["json"]
})

describe("a 10 MB JSON contact import", () => {
  it("is parsed, decoded and gathered off the main thread: /health answers fast and another account's send is accepted meanwhile", async () => {
    const key = await newSender(setup.app, setup.dns)
    const body = JSON.stringify(bigImport())
    expect(body.length).toBeGreaterThan(10_000_000)
    const run = await whileRunning(() => importJson(body, key.token))
    expect(run.result.status).toBe(200)
    expect(run.result.json).toMatchObject({ created: 80_002, updated: 0, skipped: 0, invalid: 0 })
    // The other account's send was answered while the import still ran, and accepted.
    expect(run.health.sends?.[0]?.answeredAt).toBeLessThan(run.settledAt)
    // Before the move one answer waited for the whole parse and decode (0.5 s quiet, seconds loaded).
    expectResponsive(run.health)
    expect(await contactsOf(key.keyId)).toBe(80_002)
    const [stored] = await query<{ tags: Array<string>; plan: string }>(
      setup.app.databaseUrl,
      "SELECT tags, metadata ->> 'plan' AS plan FROM contacts WHERE key_id = $1 AND email = 'json-contact-000003@example.org'",
      [key.keyId]
    )
    expect(stored).toEqual({ tags: ["imported", "cohort-3", "json"], plan: "pro" })
  }, 180_000)

  it("answers as before for bodies the worker refuses or folds: bad JSON, a bad row, a repeated address, metadata over its bound", async () => {
    const key = await newSender(setup.app, setup.dns)
    const syntax = await importJson("{\"contacts\": [", key.token)
    expect(syntax.status).toBe(400)
    expect(syntax.json.error).toMatchObject({ type: "invalid_request_error", code: "invalid_json" })
    const badName = await importJson({ contacts: [{ email: "a@example.org" }, { email: "b@example.org", name: 7 }] }, key.token)
    expect(badName.status).toBe(400)
    expect(badName.json.error).toMatchObject({ code: "validation_failed", param: "contacts[1].name" })
    const nul = await importJson({ contacts: [{ email: "a@example.org", name: "x\u0000y" }] }, key.token)
    expect(nul.status).toBe(400)
    expect(nul.json.error).toMatchObject({ code: "validation_failed", param: "contacts[0].name" })
    // Two rows of one address fold into the first; their metadata merged is over 32 KB.
    const half = "m".repeat(20_000)
    const merged = await importJson({ contacts: [{ email: "x@example.org" }, { email: "Fold@example.org", metadata: { a: half } }, { email: "fold@example.org", metadata: { b: half } }] }, key.token)
    expect(merged.status).toBe(400)
    expect(merged.json.error).toMatchObject({ code: "validation_failed", param: "contacts[2].metadata" })
    expect(await contactsOf(key.keyId)).toBe(0)
    const folded = await importJson({ contacts: [{ email: "Fold@example.org", tags: ["a"] }, { email: "fold@example.org", name: "F", tags: ["b"] }, { email: "nope" }] }, key.token)
    expect(folded.status).toBe(200)
    expect(folded.json).toMatchObject({ created: 1, invalid: 1, errors: [{ row: 3, email: "nope", reason: "invalid email syntax" }] })
    const [stored] = await query<{ email: string; name: string; tags: Array<string> }>(setup.app.databaseUrl, "SELECT email, name, tags FROM contacts WHERE key_id = $1", [key.keyId])
    expect(stored).toEqual({ email: "Fold@example.org", name: "F", tags: ["a", "b"] })
  })
})
