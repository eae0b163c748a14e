/**
 * The platform lists an operator keeps from a shell — `suppressions add|remove|list` (an
 * account's list, or the platform's with `--platform`) and `blocked-domains add|remove|list` —
 * and what they do to a send through the HTTP API of a running appliance on the same database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { cli, cliRefused } from "./cli.ts"

let app: Appliance
let dns: DnsServer
let sender: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
  sender = await newSender(app, dns)
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

/** The status of the single item of a send from `sender` to `to`. */
const sendStatus = async (to: string): Promise<string> => {
  const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
  expect(res.status, res.text).toBe(202)
  return res.json.items[0].status
}

describe("suppressions from the shell", () => {
  it("a platform suppression makes every account's send to the address suppressed, until it is removed", async () => {
    const db = app.databaseUrl
    expect(await sendStatus("listed@example.org")).toBe("queued")

    const added = await cli(db, ["suppressions", "add", "--platform", "--email", "Listed@Example.org", "--reason", "complaint"])
    expect(added.json).toMatchObject({ account_id: null, email: "listed@example.org", reason: "complaint", source: "operator" })
    expect(await sendStatus("listed@example.org")).toBe("suppressed")

    const listed = await cli(db, ["suppressions", "list", "--platform"])
    expect(listed.json).toMatchObject({ account_id: null, total: 1, items: [expect.objectContaining({ email: "listed@example.org" })] })

    const removed = await cli(db, ["suppressions", "remove", "--platform", "--email", "listed@example.org"])
    expect(removed.json).toMatchObject({ account_id: null, email: "listed@example.org", deleted: true })
    expect(await sendStatus("listed@example.org")).toBe("queued")
  }, 900_000)

  it("an account suppression lands on that account's own list", async () => {
    const db = app.databaseUrl
    await cli(db, ["suppressions", "add", "--account", sender.accountId, "--email", "own@example.org"])
    const own = await cli(db, ["suppressions", "list", "--account", sender.accountId])
    expect(own.json.items).toEqual([expect.objectContaining({ email: "own@example.org", reason: "manual" })])
    const api = await app.request("GET", "/v1/client/suppressions", { token: sender.token })
    expect(api.status).toBe(200)
    expect(JSON.stringify(api.json)).toContain("own@example.org")
    expect(await sendStatus("own@example.org")).toBe("suppressed")
  }, 600_000)

  it("refuses a command given both --account and --platform, and an address not on the list", async () => {
    const db = app.databaseUrl
    const both = await cliRefused(db, ["suppressions", "list", "--platform", "--account", sender.accountId])
    expect(both.json.error.code).toBe("invalid_arguments")
    const missing = await cliRefused(db, ["suppressions", "remove", "--platform", "--email", "never@example.org"])
    expect(missing.json.error.code).toBe("not_found")
  }, 600_000)
})

describe("blocked recipient domains from the shell", () => {
  it("a blocked domain makes sends to it rejected, until it is unblocked", async () => {
    const db = app.databaseUrl
    expect(await sendStatus("someone@shunned.example")).toBe("queued")

    const added = await cli(db, ["blocked-domains", "add", "--domain", "Shunned.Example.", "--reason", "abuse reports"])
    expect(added.json).toMatchObject({ domain: "shunned.example", reason: "abuse reports", created_at: expect.any(String) })
    expect(await sendStatus("someone@shunned.example")).toBe("rejected")

    const listed = await cli(db, ["blocked-domains", "list"])
    expect(listed.json.items).toEqual([expect.objectContaining({ domain: "shunned.example" })])

    expect((await cli(db, ["blocked-domains", "remove", "--domain", "shunned.example"])).json).toEqual({ domain: "shunned.example", deleted: true })
    expect(await sendStatus("someone@shunned.example")).toBe("queued")
    const again = await cliRefused(db, ["blocked-domains", "remove", "--domain", "shunned.example"])
    expect(again.json.error.code).toBe("not_found")
  }, 900_000)
})
