/**
 * A developer's first webhook goes to their own machine. In development a refused private or
 * loopback URL names HERALD_WEBHOOK_ALLOW_PRIVATE; with it set, `localhost` is resolved by the
 * system (it is not in the appliance's DNS: here a loopback DNS server that knows no name) and the
 * receiver on it gets the delivery. Production refuses the same URLs without naming the variable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { type Receiver, startReceiver } from "./receiver.ts"

let receiver: Receiver
let dns: DnsServer

beforeAll(async () => {
  receiver = await startReceiver(200)
  dns = await startDnsServer()
})
afterAll(async () => {
  await receiver.close()
  await dns.close()
})

const setWebhook = (app: Appliance, url: string) =>
  app.request("GET", "/v1/client/keys").then((keys) =>
    app.request("PATCH", `/v1/client/keys/${keys.json.items[0].id}`, { body: { label: "hooks", webhook_url: url } })
  )

describe("in development without HERALD_WEBHOOK_ALLOW_PRIVATE", () => {
  let app: Appliance
  beforeAll(async () => {
    app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
    dns.set("lan.example", { A: ["192.168.1.20"] })
  })
  afterAll(() => app.stop())

  it.each([
    () => receiver.url(),
    () => `http://localhost:${receiver.port}/hook`,
    () => "http://lan.example/hook"
  ])("refuses a private or loopback receiver, naming the variable that allows it (%#)", async (url) => {
    const res = await setWebhook(app, url())
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "validation_failed", param: "webhook_url" })
    expect(res.json.error.message).toContain("HERALD_WEBHOOK_ALLOW_PRIVATE=true")
    expect(receiver.hits).toHaveLength(0)
  })
})

describe("in development with HERALD_WEBHOOK_ALLOW_PRIVATE=true", () => {
  let app: Appliance
  beforeAll(async () => {
    app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_WEBHOOK_ALLOW_PRIVATE: "true" } })
  })
  afterAll(() => app.stop())

  it("reaches http://localhost:<port>/ through the system resolver", async () => {
    const url = `http://localhost:${receiver.port}/local`
    const set = await setWebhook(app, url)
    expect(set.status).toBe(200)
    const keyId = (await app.request("GET", "/v1/client/keys")).json.items[0].id
    const test = await app.request("POST", `/v1/client/keys/${keyId}/webhook/test`)
    expect(test.status).toBe(202)
    const [hit] = await receiver.waitFor(1, (h) => h.path === "/local")
    expect(hit!.json.event).toBe("webhook.test")
    expect(hit!.headers["host"]).toBe(`localhost:${receiver.port}`)
  })
})
