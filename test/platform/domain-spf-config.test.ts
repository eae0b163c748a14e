/**
 * The return-path SPF record follows how mail leaves the appliance: `a:` of HERALD_HOSTNAME, the
 * addresses of HERALD_PUBLIC_IPS, or a smarthost's include (`~all` without one). The records are
 * read through the Domains service built from each configuration, on the appliance's database.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Domains } from "../../src/platform/domains/Domains.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let owner: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_HOSTNAME: "mx.herald.test" } })
  owner = await newSender(app, dns, { domain: "spf-config.example" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const recordsWith = async (env: Record<string, string>) => {
  const view = await withServices(app, Effect.flatMap(Domains, (d) => d.get(owner.accountId, owner.domain)), {
    HERALD_HOSTNAME: "mx.herald.test",
    ...env
  })
  expect(view.records.filter((r) => r.name === "spf-config.example").map((r) => r.purpose)).toEqual(["verification"])
  return view.records
}
const spfWith = async (env: Record<string, string>) => {
  const spf = (await recordsWith(env)).filter((r) => r.purpose === "spf")
  expect(spf).toHaveLength(1)
  expect(spf[0]).toMatchObject({ type: "TXT", name: "herald-bounces.spf-config.example", optional: false })
  return spf[0]!.value
}

describe("the return-path SPF record", () => {
  it("names HERALD_HOSTNAME by default, and nothing at the apex", async () => {
    expect(await spfWith({})).toBe("v=spf1 a:mx.herald.test -all")
    const served = await app.request("GET", `/v1/client/domains/${owner.domain}`, { token: owner.token })
    expect(served.json.records.find((r: { purpose: string }) => r.purpose === "spf").value).toBe("v=spf1 a:mx.herald.test -all")
  })

  it("lists the addresses of HERALD_PUBLIC_IPS as ip4:/ip6: mechanisms", async () => {
    expect(await spfWith({ HERALD_PUBLIC_IPS: "203.0.113.25, 2001:DB8::25,198.51.100.0/24" }))
      .toBe("v=spf1 ip4:203.0.113.25 ip6:2001:db8::25 ip4:198.51.100.0/24 -all")
  })

  it("refuses a HERALD_PUBLIC_IPS that is not addresses, naming the variable", async () => {
    for (const bad of ["mx.herald.test", "203.0.113.256", "203.0.113.1/33"]) {
      await expect(spfWith({ HERALD_PUBLIC_IPS: bad })).rejects.toThrow(/HERALD_PUBLIC_IPS/)
    }
  })

  it("includes HERALD_SMARTHOST_SPF_INCLUDE with a smarthost, and only soft-fails without it", async () => {
    const smarthost = { HERALD_SMARTHOST: "smtp://relay.example:587", HERALD_PUBLIC_IPS: "203.0.113.25" }
    expect(await spfWith({ ...smarthost, HERALD_SMARTHOST_SPF_INCLUDE: "spf.relay.example" }))
      .toBe("v=spf1 include:spf.relay.example -all")
    expect(await spfWith(smarthost)).toBe("v=spf1 ~all")
    await expect(spfWith({ ...smarthost, HERALD_SMARTHOST_SPF_INCLUDE: "not a domain" })).rejects.toThrow(/HERALD_SMARTHOST_SPF_INCLUDE/)
  })

  it("keeps the DMARC suggestion's reports on the return-path subdomain whatever the route", async () => {
    const dmarc = (await recordsWith({ HERALD_SMARTHOST: "smtp://relay.example:587" })).find((r) => r.purpose === "dmarc")
    expect(dmarc).toEqual({
      purpose: "dmarc",
      type: "TXT",
      name: "_dmarc.spf-config.example",
      value: "v=DMARC1; p=none; rua=mailto:dmarc@herald-bounces.spf-config.example",
      optional: true
    })
  })
})
