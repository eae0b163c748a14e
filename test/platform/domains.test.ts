/**
 * Sending domains against a DNS server on loopback: the records to publish, verification by TXT,
 * the deprecated alias with its headers, the return path, and the grace of a vanished record.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Domains } from "../../src/platform/domains/Domains.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { eventually } from "../support/eventually.ts"
import { dmarcMail, dmarcXml } from "../support/reports.ts"
import { sendRaw } from "../support/smtp-client.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let owner: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_HOSTNAME: "mx.herald.test" } })
  owner = await newSender(app, dns, { packageId: "growth" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const create = (domain: string, token = owner.token) => app.request("POST", "/v1/client/domains", { token, body: { domain } })
const recordOf = (res: { json: any }, purpose: string) => res.json.records.filter((r: { purpose: string }) => r.purpose === purpose)

describe("sending domains", () => {
  it("registers a domain unverified, with every record to publish", async () => {
    const res = await create("Records.Example")
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ domain: "records.example", verified: false, verified_at: null })
    expect(recordOf(res, "verification")[0]).toMatchObject({ type: "TXT", name: "records.example" })
    const [dkim] = recordOf(res, "dkim")
    expect(dkim.name).toMatch(/^[a-z0-9]+\._domainkey\.records\.example$/)
    // The public half of an RSA-2048 key: 294 bytes of SPKI DER.
    expect(Buffer.from(dkim.value.split("p=")[1], "base64").length).toBe(294)
    // SPF belongs to the envelope sender's domain, the return-path subdomain; nothing at the apex but the token.
    expect(res.json.records.filter((r: { name: string }) => r.name === "records.example")).toEqual([recordOf(res, "verification")[0]])
    expect(recordOf(res, "spf")).toEqual([
      { purpose: "spf", type: "TXT", name: "herald-bounces.records.example", value: "v=spf1 a:mx.herald.test -all", optional: false }
    ])
    expect(recordOf(res, "return_path")).toEqual([
      { purpose: "return_path", type: "MX", name: "herald-bounces.records.example", value: "10 mx.herald.test", optional: false }
    ])
    // DMARC is a suggestion, reporting to the return-path subdomain (same organizational domain).
    expect(recordOf(res, "dmarc")).toEqual([{
      purpose: "dmarc",
      type: "TXT",
      name: "_dmarc.records.example",
      value: "v=DMARC1; p=none; rua=mailto:dmarc@herald-bounces.records.example",
      optional: true
    }])
    expect(res.json.records.filter((r: { optional: boolean }) => !r.optional).map((r: { purpose: string }) => r.purpose).sort())
      .toEqual(["dkim", "return_path", "spf", "verification"])
    expect((await create("records.example")).status).toBe(409)
    expect((await create("not a domain")).status).toBe(400)
  })

  it("lists, reads and deletes the account's domains only", async () => {
    await create("listed.example")
    const list = await app.request("GET", "/v1/client/domains", { token: owner.token })
    expect(list.json.items.map((d: { domain: string }) => d.domain)).toContain("listed.example")
    const stranger = await newSender(app, dns)
    expect((await app.request("GET", "/v1/client/domains/listed.example", { token: stranger.token })).status).toBe(404)
    expect((await app.request("DELETE", "/v1/client/domains/listed.example", { token: stranger.token })).status).toBe(404)
    expect((await app.request("DELETE", "/v1/client/domains/listed.example", { token: owner.token })).status).toBe(200)
    expect((await app.request("GET", "/v1/client/domains/listed.example", { token: owner.token })).status).toBe(404)
  })

  it("verifies once the TXT record is published, naming the missing record before", async () => {
    const res = await create("verify.example")
    const before = await app.request("POST", "/v1/client/domains/verify.example/verify", { token: owner.token })
    expect(before.status).toBe(400)
    expect(before.json.error.message).toContain(recordOf(res, "verification")[0].value)
    dns.set("verify.example", { TXT: ["v=spf1 -all", recordOf(res, "verification")[0].value] })
    const after = await app.request("POST", "/v1/client/domains/verify.example/verify", { token: owner.token })
    expect(after.status).toBe(200)
    expect(after.json).toMatchObject({ domain: "verify.example", verified: true })
    expect(Date.parse(after.json.verified_at)).not.toBeNaN()
  })

  it("answers every record's state: verified, missing, or mismatch with what was found, and ready once all are right", async () => {
    const res = await create("states.example")
    const [txt] = recordOf(res, "verification")
    const [dkim] = recordOf(res, "dkim")
    dns.set("states.example", { TXT: ["v=spf1 include:_spf.mail.example ~all", txt.value] })
    dns.set(dkim.name, { TXT: ["v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAold"] })
    dns.set("herald-bounces.states.example", {
      MX: [{ preference: 10, exchange: "mx.elsewhere.example" }],
      TXT: ["v=spf1 include:mx.herald.test ~all"]
    })
    const first = await app.request("POST", "/v1/client/domains/states.example/verify", { token: owner.token })
    expect(first.status).toBe(200)
    expect(first.json).toMatchObject({ domain: "states.example", verified: true, ready: false })
    const state = (json: any, purpose: string) => json.records.find((r: { purpose: string }) => r.purpose === purpose)
    expect(state(first.json, "verification")).toEqual({ ...txt, status: "verified", found: [txt.value] })
    expect(state(first.json, "dkim")).toEqual({
      ...dkim,
      status: "mismatch",
      found: ["v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAold"]
    })
    expect(state(first.json, "return_path")).toMatchObject({ status: "mismatch", found: ["10 mx.elsewhere.example"] })
    expect(state(first.json, "spf")).toMatchObject({ status: "mismatch", found: ["v=spf1 include:mx.herald.test ~all"] })
    expect(state(first.json, "dmarc")).toMatchObject({ status: "missing", found: [], optional: true })

    // The key split into chunks with spaces (as long TXT values often are) still matches.
    const key = dkim.value.split("p=")[1]
    dns.set(dkim.name, { TXT: [`v=DKIM1; k=rsa; p=${key.slice(0, 200)} ${key.slice(200)}`] })
    dns.set("herald-bounces.states.example", {
      MX: [{ preference: 10, exchange: "mx.herald.test." }],
      TXT: ["v=spf1 a:mx.herald.test -all"]
    })
    dns.set("_dmarc.states.example", { TXT: ["v=DMARC1; p=quarantine; rua=mailto:reports@states.example"] })
    const second = await app.request("POST", "/v1/client/domains/states.example/verify", { token: owner.token })
    expect(second.json, second.text).toMatchObject({ ready: true })
    expect(second.json.records.map((r: { purpose: string; status: string }) => [r.purpose, r.status])).toEqual([
      ["verification", "verified"],
      ["dkim", "verified"],
      ["return_path", "verified"],
      ["spf", "verified"],
      ["dmarc", "verified"]
    ])

    // Ready asks for verification, DKIM and the return-path MX only: SPF and DMARC gone, still ready.
    dns.set("herald-bounces.states.example", { MX: [{ preference: 10, exchange: "mx.herald.test" }] })
    dns.set("_dmarc.states.example", undefined)
    const third = await app.request("POST", "/v1/client/domains/states.example/verify", { token: owner.token })
    expect(third.json.ready).toBe(true)
    expect(state(third.json, "spf")).toMatchObject({ status: "missing", found: [] })
    dns.set(dkim.name, undefined)
    const fourth = await app.request("POST", "/v1/client/domains/states.example/verify", { token: owner.token })
    expect(fourth.json).toMatchObject({ verified: true, ready: false })
    expect(state(fourth.json, "dkim")).toMatchObject({ status: "missing", found: [] })
  })

  it("answers 503 dns_lookup_failed naming the domain and the cause when the DNS server does not answer", async () => {
    await create("silent.example")
    dns.set("silent.example", { noAnswer: true })
    const res = await app.request("POST", "/v1/client/domains/silent.example/verify", { token: owner.token })
    expect(res.status).toBe(503)
    expect(res.json.error).toMatchObject({ type: "api_error", code: "dns_lookup_failed" })
    expect(res.json.error.message).toContain("silent.example")
    expect(res.json.error.message).toContain("ETIMEOUT")
    const view = await app.request("GET", "/v1/client/domains/silent.example", { token: owner.token })
    expect(view.json.verified).toBe(false)
    // A failed lookup of any other record fails the check too, and verifies nothing meanwhile.
    const other = await create("half-silent.example")
    dns.set("half-silent.example", { TXT: [recordOf(other, "verification")[0].value] })
    dns.set("_dmarc.half-silent.example", { noAnswer: true })
    const half = await app.request("POST", "/v1/client/domains/half-silent.example/verify", { token: owner.token })
    expect(half.status).toBe(503)
    expect(half.json.error.message).toContain("_dmarc.half-silent.example")
    expect((await app.request("GET", "/v1/client/domains/half-silent.example", { token: owner.token })).json.verified).toBe(false)
  })

  it("answers 404 for a domain not registered to the account", async () => {
    const res = await app.request("POST", "/v1/client/domains/nobody.example/verify", { token: owner.token })
    expect(res.status).toBe(404)
  })

  it("keeps the deprecated alias working, with Deprecation, Sunset and successor Link headers", async () => {
    const res = await create("alias.example")
    dns.set("alias.example", { TXT: [recordOf(res, "verification")[0].value] })
    const legacy = await app.request("POST", "/v1/domains/alias.example/verify", { token: owner.token })
    expect(legacy.status).toBe(200)
    expect(legacy.json.verified).toBe(true)
    expect(legacy.json.ready).toBe(false)
    expect(legacy.json.records.map((r: { purpose: string; status: string }) => `${r.purpose}:${r.status}`))
      .toEqual(["verification:verified", "dkim:missing", "return_path:missing", "spf:missing", "dmarc:missing"])
    expect(legacy.headers.get("deprecation")).toMatch(/^@\d+$/)
    expect(legacy.headers.get("sunset")).toContain("2027")
    expect(legacy.headers.get("link")).toContain('/v1/client/domains/alias.example/verify>; rel="successor-version"')
    const doc = await app.request("GET", "/openapi/openapi.platform.json", { token: null })
    expect(doc.json.paths["/v1/domains/{domain}/verify"].post.deprecated).toBe(true)
  })

  it("verifies the return path when its MX points at the appliance, and takes the DMARC reports sent to dmarc@ there", async () => {
    const res = await create("rp.example")
    dns.set("rp.example", { TXT: [recordOf(res, "verification")[0].value] })
    dns.set("herald-bounces.rp.example", { MX: [{ preference: 10, exchange: "mx.herald.test" }] })
    await app.request("POST", "/v1/client/domains/rp.example/verify", { token: owner.token })
    const view = await app.request("GET", "/v1/client/domains/rp.example", { token: owner.token })
    expect(view.json.return_path_verified).toBe(true)
    // The DMARC suggestion's rua (dmarc@ the return-path subdomain) reaches the MX listener and is filed.
    const rua = recordOf(res, "dmarc")[0].value.split("rua=mailto:")[1]
    expect(rua).toBe("dmarc@herald-bounces.rp.example")
    const end = Math.floor(Date.now() / 1000)
    const report = dmarcMail(rua, "rp-report", dmarcXml("rp.example", "rp-1", end - 86_400, end, [
      { ip: "203.0.113.9", count: 3, dkim: "pass", spf: "pass" }
    ]))
    expect((await sendRaw(app.smtpPort, { from: "noreply-dmarc@receiver.test", to: [rua] }, report)).code).toBe(250)
    const stored = await eventually(async () => {
      const rows = await query<{ account_id: string }>(app.databaseUrl, "SELECT account_id FROM dmarc_reports WHERE domain = 'rp.example'")
      return rows.length > 0 ? rows : undefined
    }, "the DMARC report sent to the return-path subdomain")
    expect(stored.map((r) => r.account_id)).toEqual([owner.accountId])
  })

  it("picks up a return-path MX published after verification at the re-check, and drops it once removed", async () => {
    const res = await create("rp-later.example")
    dns.set("rp-later.example", { TXT: [recordOf(res, "verification")[0].value] })
    expect((await app.request("POST", "/v1/client/domains/rp-later.example/verify", { token: owner.token })).status).toBe(200)
    const returnPath = async () =>
      (await app.request("GET", "/v1/client/domains/rp-later.example", { token: owner.token })).json.return_path_verified
    expect(await returnPath()).toBe(false)
    const recheckAt = (at: Date) =>
      withServices(app, Effect.flatMap(Domains, (d) => d.recheck(at, at)), { HERALD_DNS_SERVERS: dns.address, HERALD_HOSTNAME: "mx.herald.test" })
    dns.set("herald-bounces.rp-later.example", { MX: [{ preference: 10, exchange: "mx.herald.test." }] })
    const later = new Date(Date.now() + 7 * 3_600_000)
    await recheckAt(later)
    expect(await returnPath()).toBe(true)
    // An MX pointing elsewhere does not count, and is noticed at the next re-check.
    dns.set("herald-bounces.rp-later.example", { MX: [{ preference: 10, exchange: "mx.elsewhere.example" }] })
    await recheckAt(new Date(later.getTime() + 7 * 3_600_000))
    expect(await returnPath()).toBe(false)
    dns.set("herald-bounces.rp-later.example", { MX: [{ preference: 10, exchange: "mx.herald.test" }] })
    await recheckAt(new Date(later.getTime() + 14 * 3_600_000))
    expect(await returnPath()).toBe(true)
    dns.set("herald-bounces.rp-later.example", undefined)
    await recheckAt(new Date(later.getTime() + 21 * 3_600_000))
    expect(await returnPath()).toBe(false)
  })

  it("starts the grace window when a re-check no longer finds the record, and ends it when the record is back", async () => {
    const res = await create("recheck.example")
    const txt = recordOf(res, "verification")[0].value
    dns.set("recheck.example", { TXT: [txt] })
    await app.request("POST", "/v1/client/domains/recheck.example/verify", { token: owner.token })
    const later = new Date(Date.now() + 7 * 3_600_000)
    dns.set("recheck.example", { TXT: ["something else"] })
    await withServices(app, Effect.flatMap(Domains, (d) => d.recheck(later, later)), { HERALD_DNS_SERVERS: dns.address })
    const lost = await query<{ verification_lost_at: Date | null }>(app.databaseUrl, "SELECT verification_lost_at FROM domains WHERE domain = 'recheck.example'")
    expect(lost[0]!.verification_lost_at?.getTime()).toBe(later.getTime())
    dns.set("recheck.example", { TXT: [txt] })
    const evenLater = new Date(later.getTime() + 3_600_000)
    await withServices(app, Effect.flatMap(Domains, (d) => d.recheck(evenLater, evenLater)), { HERALD_DNS_SERVERS: dns.address })
    const back = await query<{ verification_lost_at: Date | null }>(app.databaseUrl, "SELECT verification_lost_at FROM domains WHERE domain = 'recheck.example'")
    expect(back[0]!.verification_lost_at).toBeNull()
  })

  it("keeps a domain whose record vanished sending during the grace window, then refuses it", async () => {
    const res = await app.request("POST", "/v1/mail/send", { token: owner.token, body: sendBody(owner, "grace@example.org") })
    expect(res.status).toBe(202)
    await query(app.databaseUrl, "UPDATE domains SET verification_lost_at = now() - interval '1 hour' WHERE domain = $1", [owner.domain])
    expect((await app.request("POST", "/v1/mail/send", { token: owner.token, body: sendBody(owner, "grace@example.org") })).status).toBe(202)
    await query(app.databaseUrl, "UPDATE domains SET verification_lost_at = now() - interval '73 hours' WHERE domain = $1", [owner.domain])
    const refused = await app.request("POST", "/v1/mail/send", { token: owner.token, body: sendBody(owner, "grace@example.org") })
    expect(refused.status).toBe(403)
    expect(refused.json.error.message).toContain("grace")
  })
})
