/**
 * Set-ups that sending tests share: an account (own key) with a verified sending domain, verified
 * through the real API against the loopback DNS server, exactly as a customer would.
 */
import { expect } from "vitest"
import { type Appliance, startAppliance } from "./appliance.ts"
import { type DnsServer, startDnsServer } from "./dns-server.ts"

export interface Sender {
  readonly accountId: string
  readonly token: string
  readonly keyId: string
  readonly domain: string
  readonly from: string
}

let counter = 0

/** A new account (optionally on a plan) with its own key and a verified domain. */
export const newSender = async (
  app: Appliance,
  dns: DnsServer,
  options: { readonly packageId?: string; readonly domain?: string } = {}
): Promise<Sender> => {
  counter += 1
  const tag = `${Date.now().toString(36)}${counter}`
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: {
      name: `Sender ${tag}`,
      email: `owner-${tag}@customers.test`,
      password: "correct horse battery",
      ...(options.packageId === undefined ? {} : { package_id: options.packageId })
    }
  })
  expect(account.status).toBe(201)
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "tests" } })
  expect(key.status).toBe(201)
  const domain = options.domain ?? `d${tag}.example`
  const created = await app.request("POST", "/v1/client/domains", { token: key.json.token, body: { domain } })
  expect(created.status).toBe(201)
  const txt = created.json.records.find((r: { purpose: string }) => r.purpose === "verification")
  dns.set(domain, { TXT: [txt.value] })
  const verified = await app.request("POST", `/v1/client/domains/${domain}/verify`, { token: key.json.token })
  expect(verified.status).toBe(200)
  await setPostalAddress(app, key.json.token)
  return { accountId: account.json.id, token: key.json.token, keyId: key.json.id, domain, from: `hello@${domain}` }
}

/** Another key of `sender`'s account (the bulk area's resources belong to a key, not the account). */
export const siblingKey = async (app: Appliance, sender: Sender): Promise<{ readonly token: string; readonly keyId: string }> => {
  const key = await app.request("POST", `/v1/admin/accounts/${sender.accountId}/keys`, { body: { label: "second" } })
  expect(key.status).toBe(201)
  await setPostalAddress(app, key.json.token)
  return { token: key.json.token, keyId: key.json.id }
}

/** The key's postal address, which bulk mail must carry (issue 30 item 9): every test sender has one. */
export const setPostalAddress = async (app: Appliance, token: string, address = "Herald Tests, 1 Test Street, Testville") => {
  const res = await app.request("PUT", "/v1/bulk/settings", { token, body: { postal_address: address } })
  expect(res.status).toBe(200)
}

/** Points the webhooks of `key` (a sender, or any key with its token) at `url`, as its owner would. */
export const hookWebhooks = async (app: Appliance, key: { readonly keyId: string; readonly token: string }, url: string) => {
  const res = await app.request("PATCH", `/v1/client/keys/${key.keyId}`, { token: key.token, body: { label: "tests", webhook_url: url } })
  expect(res.status).toBe(200)
}

/** A minimal valid full-form body from `sender` to `to`. */
export const sendBody = (sender: Sender, to: string | ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  personalizations: [{ to: (typeof to === "string" ? [to] : to).map((email) => ({ email })) }],
  from: { email: sender.from, name: "Herald Tests" },
  subject: "Hello",
  content: [{ type: "text/plain", value: "Hello from the tests" }],
  ...extra
})

export interface SendingApp {
  readonly app: Appliance
  readonly dns: DnsServer
  readonly sender: Sender
  readonly stop: () => Promise<void>
}

/**
 * The usual set-up of a sending test file: an appliance resolving through a loopback DNS server,
 * and one sender with a verified domain on `packageId` (growth: a rate that leaves room for every
 * case; with no plan an account sends 30 requests a minute).
 */
export const startSendingApp = async (env: Record<string, string> = {}, packageId = "growth"): Promise<SendingApp> => {
  const dns = await startDnsServer()
  const app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, ...env } })
  const sender = await newSender(app, dns, { packageId })
  return {
    app,
    dns,
    sender,
    stop: async () => {
      await app.stop()
      await dns.close()
    }
  }
}

/** Queues `count` one-recipient messages (r0@many.example, r1@…) through the API, 100 personalizations a request. */
export const queueMessages = async (app: Pick<Appliance, "request">, token: string, from: string, count: number) => {
  for (let start = 0; start < count; start += 100) {
    const personalizations = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({ to: [{ email: `r${start + i}@many.example` }] }))
    const res = await app.request("POST", "/v1/mail/send", {
      token,
      body: { personalizations, from: { email: from }, subject: "Load", content: [{ type: "text/plain", value: "x" }] }
    })
    expect(res.status).toBe(202)
  }
}
