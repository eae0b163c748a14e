/**
 * The body budget is shared per account, not per key (issue #26, finding 6), at the default sizes
 * (MAX_JSON_MB 15, HERALD_HTTP_BODY_BUDGET_MB 32, account and key shares 50 %): two keys of one
 * account each trickling a 15 MB send used to hold 30 of the 32 MB, and another account's 5 MB
 * send waited until the trickles were dropped. Unauthenticated uploads to the public pages held
 * room too (all of them one share, whatever their address), though a page reads at most a 4 KB
 * form. Now another account's send is answered at once, `/health` stays quick, and the attacker's
 * uploads wait for their own account's room.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { unsubscribeToken } from "../../src/bulk/public/unsubscribe-link.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { expectResponsive, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const MB = 1024 * 1024
/** What "promptly" means here: far less than the upload grace period (10 s) the trickles get. */
const PROMPT_MS = 3_000

let app: Appliance
let dns: DnsServer
let attacker: Sender
let attackerSecondKey: string
let victim: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  // The defaults of every body variable (the budget, the shares, the rate and its grace period).
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
  attacker = await newSender(app, dns)
  // Accounts make their own keys.
  const second = await app.request("POST", "/v1/client/keys", { token: attacker.token, body: { label: "second" } })
  expect(second.status).toBe(201)
  attackerSecondKey = second.json.token
  victim = await newSender(app, dns)
}, 120_000)
afterAll(async () => {
  await app.stop()
  await dns.close()
})

interface Trickle {
  /** The status line's code once the appliance answers (0: the socket closed first). */
  readonly answer: Promise<number>
  readonly destroy: () => void
}

/** A request that declares its body (or sends it chunked) and then sends only its first bytes. */
const trickle = (head: string, first: string, localAddress = "127.0.0.1"): Trickle => {
  const socket = net.connect({ port: Number(new URL(app.baseUrl).port), host: "127.0.0.1", localAddress })
  socket.on("error", () => undefined)
  socket.write(head + first)
  const answer = new Promise<number>((resolve) => {
    let text = ""
    socket.on("data", (chunk) => (text += chunk.toString()))
    socket.on("close", () => resolve(Number(text.split(" ")[1] ?? 0)))
  })
  return { answer, destroy: () => socket.destroy() }
}

/** A 15 MB send (MAX_JSON_MB) by `token`, of which 1 KB arrives. */
const trickleSend = (token: string) =>
  trickle(
    `POST /v1/mail/send HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${15 * MB}\r\n\r\n`,
    "{".padEnd(1024, " ")
  )

/** A chunked one-click POST to an unsubscribe page from `localAddress`, of which one chunk arrives. */
const tricklePage = (path: string, localAddress: string) =>
  trickle(
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n`,
    "5\r\nList-\r\n",
    localAddress
  )

/** The victim's 5 MB send: its status and how long it took. */
const victimSend = async (to: string) => {
  const started = Date.now()
  const res = await app.request("POST", "/v1/mail/send", {
    token: victim.token,
    body: sendBody(victim, to, { content: [{ type: "text/plain", value: "v".repeat(5 * MB) }] })
  })
  return { status: res.status, ms: Date.now() - started }
}

/** The victim's send, with `/health` probed from before it until at least 1.5 s have passed (its 5 MB body is parsed in this process: a few answers wait for it). */
const victimSendProbed = async (to: string) => {
  const { result, health } = await probeHealthWhile(app, () => victimSend(to), { minMs: 1_500 })
  console.log(`${to}: sent in ${result.ms} ms; ${formatHealth(health)}`)
  return { sent: result, health }
}

const queued = async (recipient: string) =>
  (await query<{ n: number }>(app.databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE recipient = $1", [recipient]))[0]!.n

/** Lets the trickles reach their handlers and take (or wait for) their room. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500))

describe("the body budget per account", () => {
  it("serves another account's 5 MB send promptly while two keys of one account trickle 15 MB sends", async () => {
    const uploads = [trickleSend(attacker.token), trickleSend(attackerSecondKey)]
    try {
      await settle()
      const { sent, health } = await victimSendProbed("served-promptly@example.org")
      expect(sent.status).toBe(202)
      expect(sent.ms).toBeLessThan(PROMPT_MS)
      expect(await queued("served-promptly@example.org")).toBe(1)
      expectResponsive(health)
    } finally {
      for (const upload of uploads) upload.destroy()
    }
  }, 60_000)

  it("gives the public pages no room for what they will not read: 20 trickling unsubscribe POSTs from one address hold none", async () => {
    const [secret] = await query<{ value: string }>(app.databaseUrl, "SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
    const token = unsubscribeToken(makeTokens(secret!.value), { accountId: victim.accountId, email: "reader@example.org", source: "cp_test" })
    // One key's send takes its 15 MB; before, the pages' uploads (one share of 16 MB for every
    // address, each counted as its route's 1 MB limit) took the rest.
    const uploads = [trickleSend(attacker.token), ...Array.from({ length: 20 }, () => tricklePage(`/u/${token}`, "127.0.0.2"))]
    try {
      await settle()
      const { sent, health } = await victimSendProbed("not-behind-the-pages@example.org")
      expect(sent.status).toBe(202)
      expect(sent.ms).toBeLessThan(PROMPT_MS)
      expectResponsive(health)
      // A one-click from another address is served as ever.
      const oneClick = await fetch(`${app.baseUrl}/u/${token}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "List-Unsubscribe=One-Click"
      })
      expect(oneClick.status).toBe(200)
    } finally {
      for (const upload of uploads) upload.destroy()
    }
  }, 60_000)
})
