/**
 * GET /metrics (issue 32) against a running appliance with real delivery peers (a loopback DNS
 * server and an SMTP sink): a send, its delivery, an SMTP-time bounce and a DSN each move their
 * counters by exactly one; destinations not named in the shaping file are `other`; routes are
 * templates; the token is required (a wrong one is 401 and a failed authentication of the address,
 * in the table the API's bearer shares); without a token or a port, 404; the separate port.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { freePort } from "../support/net.ts"
import { dsn, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { writeShapingFile } from "../support/shaping.ts"
import { sendRaw } from "../support/smtp-client.ts"

const TOKEN = "metrics-token-0123456789abcdef"

/** One scrape as series → value (`name{labels}` exactly as exported). */
const parse = (text: string): Map<string, number> => {
  const series = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const at = line.lastIndexOf(" ")
    series.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return series
}

/** `token` null: no Authorization header. */
const scrapeAt = async (url: string, token: string | null = TOKEN) => {
  const response = await fetch(url, token === null ? {} : { headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, text: await response.text(), headers: response.headers }
}

describe("GET /metrics with a token, after real sends, deliveries and bounces", () => {
  let rig: DeliveryRig
  let sender: Sender
  const scrape = async () => {
    const answer = await scrapeAt(`${rig.app.baseUrl}/metrics`)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("text/plain")
    return parse(answer.text)
  }
  /** The change of each named series between two scrapes (absent = 0). */
  const moved = (before: Map<string, number>, after: Map<string, number>, names: ReadonlyArray<string>) =>
    Object.fromEntries(names.map((n) => [n, (after.get(n) ?? 0) - (before.get(n) ?? 0)]))
  const deliveryState = async (recipient: string) =>
    (await query<{ state: string }>(rig.app.databaseUrl, "SELECT state FROM deliveries WHERE recipient = $1", [recipient]))[0]?.state
  const sendTo = async (to: string) => {
    const res = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
    expect(res.status).toBe(202)
  }

  beforeAll(async () => {
    const shaping = writeShapingFile({ max_connections: 5, messages_per_connection: 10, max_messages_per_minute: null }, [
      { name: "named", domains: ["named.test"], mx_suffixes: [], max_connections: 5, messages_per_connection: 10, max_messages_per_minute: null }
    ])
    rig = await startDeliveryRig({ HERALD_METRICS_TOKEN: TOKEN, HERALD_SHAPING_FILE: shaping })
    sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    rig.route("rcpt.test")
    rig.route("named.test")
  })
  afterAll(async () => {
    await rig.stop()
  })

  it("counts one send, its delivery, an SMTP bounce and a DSN exactly once each", async () => {
    const before = await scrape()
    await sendTo("ok@rcpt.test")
    await eventually(async () => ((await deliveryState("ok@rcpt.test")) === "sent" ? true : undefined), "sent")
    const afterSend = await scrape()
    expect(moved(before, afterSend, [
      `herald_sends_accepted_total{channel="api",outcome="queued"}`,
      `herald_send_messages_total{channel="api",status="queued"}`,
      `herald_deliveries_total{result="sent",site="other"}`,
      `herald_smtp_replies_total{class="2xx"}`,
      "herald_dkim_sign_seconds_count",
      `herald_http_requests_total{method="POST",route="/v1/mail/send",status="202"}`
    ])).toEqual({
      [`herald_sends_accepted_total{channel="api",outcome="queued"}`]: 1,
      [`herald_send_messages_total{channel="api",status="queued"}`]: 1,
      [`herald_deliveries_total{result="sent",site="other"}`]: 1,
      [`herald_smtp_replies_total{class="2xx"}`]: 1,
      "herald_dkim_sign_seconds_count": 1,
      [`herald_http_requests_total{method="POST",route="/v1/mail/send",status="202"}`]: 1
    })
    // The smtp channel is exported, and an API send does not move it. (Counters live in the process,
    // and other files' in-process appliances may have moved it before: compare, never expect 0.)
    const smtpQueued = `herald_sends_accepted_total{channel="smtp",outcome="queued"}`
    expect(afterSend.get(smtpQueued)).toBeDefined()
    expect(afterSend.get(smtpQueued)).toBe(before.get(smtpQueued))

    // Refused at RCPT by the far side: a bounce at SMTP time.
    rig.sink.replies.set("gone@rcpt.test", "550 5.1.1 User unknown")
    await sendTo("gone@rcpt.test")
    await eventually(async () => ((await deliveryState("gone@rcpt.test")) === "bounced" ? true : undefined), "bounced")
    const afterBounce = await scrape()
    expect(moved(afterSend, afterBounce, [
      `herald_deliveries_total{result="bounced",site="other"}`,
      `herald_deliveries_total{result="sent",site="other"}`,
      `herald_smtp_replies_total{class="5xx"}`
    ])).toEqual({
      [`herald_deliveries_total{result="bounced",site="other"}`]: 1,
      [`herald_deliveries_total{result="sent",site="other"}`]: 0,
      [`herald_smtp_replies_total{class="5xx"}`]: 1
    })

    // A DSN for the delivered message, to its VERP address.
    const received = rig.sink.received.find((r) => r.rcptTo.includes("ok@rcpt.test"))!
    const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [received.mailFrom] }, dsn(received.mailFrom, "ok@rcpt.test", "5.1.1", headersOf(received.raw)))
    expect(reply.code).toBe(250)
    await eventually(async () => ((await deliveryState("ok@rcpt.test")) === "bounced" ? true : undefined), "late bounce")
    const afterDsn = await eventually(async () => {
      const s = await scrape()
      return s.get(`herald_inbound_messages_total{kind="bounce"}`) !== afterBounce.get(`herald_inbound_messages_total{kind="bounce"}`) ? s : undefined
    }, "inbound counted")
    expect(moved(afterBounce, afterDsn, [`herald_inbound_messages_total{kind="bounce"}`, "herald_inbound_parse_failures_total"])).toEqual({
      [`herald_inbound_messages_total{kind="bounce"}`]: 1,
      "herald_inbound_parse_failures_total": 0
    })
  })

  it("labels a destination by its shaping name only when config/shaping.json names it, every other one `other`", async () => {
    const before = await scrape()
    await sendTo("someone@named.test")
    await eventually(async () => ((await deliveryState("someone@named.test")) === "sent" ? true : undefined), "sent")
    const after = await scrape()
    expect(moved(before, after, [`herald_deliveries_total{result="sent",site="named"}`, `herald_deliveries_total{result="sent",site="other"}`]))
      .toEqual({ [`herald_deliveries_total{result="sent",site="named"}`]: 1, [`herald_deliveries_total{result="sent",site="other"}`]: 0 })
    // No recipient domain, address or id becomes a label.
    const text = (await scrapeAt(`${rig.app.baseUrl}/metrics`)).text
    expect(text).not.toContain("rcpt.test")
    expect(text).not.toContain("named.test")
    expect(text).not.toMatch(/msg_|acc_|key_/)
  })

  it("labels HTTP requests by route template, every unknown path as one label", async () => {
    await rig.app.request("GET", "/v1/bulk/campaigns/cp_notthere123", { token: sender.token })
    await rig.app.request("GET", "/no/such/path-a1b2c3")
    const text = (await scrapeAt(`${rig.app.baseUrl}/metrics`)).text
    expect(text).toContain(`herald_http_requests_total{method="GET",route="/v1/bulk/campaigns/:id",status="404"}`)
    expect(text).toContain(`route="unmatched"`)
    expect(text).not.toContain("cp_notthere123")
    expect(text).not.toContain("path-a1b2c3")
  })

  it("reads the queue from the database: a waiting delivery shows in its state and lane", async () => {
    const text = (await scrapeAt(`${rig.app.baseUrl}/metrics`)).text
    const series = parse(text)
    expect(series.get("herald_database_up")).toBe(1)
    expect(series.has(`herald_queue_deliveries{state="queued",lane="transactional"}`)).toBe(true)
    expect(series.has(`herald_db_pool_connections{state="in_use"}`)).toBe(true)
    expect(series.has("nodejs_eventloop_lag_seconds")).toBe(true)
    expect(series.has("process_resident_memory_bytes")).toBe(true)
  })

  it("answers 401 to a missing or wrong token; a wrong one counts as a failed authentication of the address", async () => {
    const before = parse((await scrapeAt(`${rig.app.baseUrl}/metrics`)).text)
    expect((await scrapeAt(`${rig.app.baseUrl}/metrics`, null)).status).toBe(401)
    const wrong = await scrapeAt(`${rig.app.baseUrl}/metrics`, "not-the-metrics-token-at-all")
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.text).error.code).toBe("unauthorized")
    const after = parse((await scrapeAt(`${rig.app.baseUrl}/metrics`)).text)
    expect(moved(before, after, [`herald_auth_failures_total{endpoint="metrics"}`])).toEqual({ [`herald_auth_failures_total{endpoint="metrics"}`]: 1 })
  })
})

describe("GET /metrics's access", () => {
  let app: Appliance | undefined
  afterAll(async () => {
    await app?.stop()
  })

  it("is 404 with neither HERALD_METRICS_TOKEN nor HERALD_METRICS_PORT", async () => {
    app = await startAppliance()
    const res = await app.request("GET", "/metrics", { token: null })
    expect(res.status).toBe(404)
    expect(res.json.error.code).toBe("not_found")
    await app.stop()
    app = undefined
  })

  it("shares the per-address failed-authentication table with the API: wrong metrics tokens throttle wrong API tokens", async () => {
    app = await startAppliance({ env: { HERALD_METRICS_TOKEN: TOKEN, HERALD_AUTH_FAILURES_PER_MIN: "3" } })
    for (let i = 0; i < 3; i++) expect((await scrapeAt(`${app.baseUrl}/metrics`, `wrong-token-number-${i}-xxxxxxxx`)).status).toBe(401)
    // The address is past its 3 failures: the API's bearer refuses its next unknown token with 429, not 401.
    const api = await app.request("GET", "/v1/client/usage", { token: "hrld_test_unknown_token_0000000000000000" })
    expect(api.status).toBe(429)
    expect((await scrapeAt(`${app.baseUrl}/metrics`, "wrong-token-again-xxxxxxxxxxxx")).status).toBe(429)
    // The right token is still served.
    expect((await scrapeAt(`${app.baseUrl}/metrics`)).status).toBe(200)
    await app.stop()
    app = undefined
  })

  it("serves only /metrics on HERALD_METRICS_PORT (bound to HERALD_METRICS_HOST), and not on the API port without a token", async () => {
    const port = await freePort()
    app = await startAppliance({ env: { HERALD_METRICS_PORT: String(port), HERALD_METRICS_HOST: "127.0.0.1" } })
    const scraped = await scrapeAt(`http://127.0.0.1:${port}/metrics`, null)
    expect(scraped.status).toBe(200)
    expect(scraped.text).toContain("herald_sends_accepted_total")
    expect((await scrapeAt(`http://127.0.0.1:${port}/v1/client/usage`, null)).status).toBe(404)
    expect((await scrapeAt(`http://127.0.0.1:${port}/health`, null)).status).toBe(404)
    expect((await app.request("GET", "/metrics", { token: null })).status).toBe(404)
    await app.stop()
    app = undefined
  })

  it("requires the token on the separate port too when one is set", async () => {
    const port = await freePort()
    app = await startAppliance({ env: { HERALD_METRICS_PORT: String(port), HERALD_METRICS_TOKEN: TOKEN } })
    expect((await scrapeAt(`http://127.0.0.1:${port}/metrics`, null)).status).toBe(401)
    expect((await scrapeAt(`http://127.0.0.1:${port}/metrics`, "x-wrong-token-xxxxxxxxxxxxxxx")).status).toBe(401)
    expect((await scrapeAt(`http://127.0.0.1:${port}/metrics`)).status).toBe(200)
    expect((await scrapeAt(`${app.baseUrl}/metrics`)).status).toBe(200)
    await app.stop()
    app = undefined
  })
})
