/**
 * MTA-STS at delivery (RFC 8461 §4.2) against local peers: a DNS server publishing the MX and
 * `_mta-sts` records, an HTTPS server serving the policies with a certificate from a test CA, and
 * three SMTP sinks on one port — STARTTLS with a certificate for its name, no STARTTLS (what an
 * attacker who strips STARTTLS leaves), and STARTTLS with a certificate for another name.
 * `enforce` delivers only over verified TLS to the MX hosts it names and otherwise defers (never
 * plaintext); `testing` delivers as before and records what fell short; `none` is no policy. Each
 * attempt records its session's TLS version and whether the certificate verified.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { policyText, type PolicyServer, startPolicyServer } from "../support/policy-server.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts"
import { makeTestCa } from "../support/test-ca.ts"
import { type OutboundRig, startOutbound, waitForState } from "./outbound.ts"

const POLICIES = {
  "enforce-ok.example": ["enforce", "mx.good.test"],
  "enforce-plain.example": ["enforce", "mx.plain.test"],
  "enforce-wrong.example": ["enforce", "mx.wrong.test"],
  "enforce-unnamed.example": ["enforce", "*.elsewhere.test"],
  "testing-wrong.example": ["testing", "mx.wrong.test"],
  "testing-plain.example": ["testing", "mx.plain.test"],
  "none-plain.example": ["none", "mx.plain.test"]
} as const
const MX_OF: Record<keyof typeof POLICIES, string> = {
  "enforce-ok.example": "mx.good.test",
  "enforce-plain.example": "mx.plain.test",
  "enforce-wrong.example": "mx.wrong.test",
  "enforce-unnamed.example": "mx.good.test",
  "testing-wrong.example": "mx.wrong.test",
  "testing-plain.example": "mx.plain.test",
  "none-plain.example": "mx.plain.test"
}

let good: SmtpSink
let plain: SmtpSink
let wrong: SmtpSink
let policies: PolicyServer
let rig: OutboundRig

beforeAll(async () => {
  const ca = makeTestCa()
  good = await startSmtpSink({ tls: ca.issue(["mx.good.test"]) })
  plain = await startSmtpSink({ host: "127.0.0.2", port: good.port })
  // Signed by the trusted CA, but for another name: only the host check can refuse it.
  wrong = await startSmtpSink({ host: "127.0.0.3", port: good.port, tls: ca.issue(["someone-else.test"]) })
  policies = await startPolicyServer(ca.issue(Object.keys(POLICIES).map((d) => `mta-sts.${d}`)))
  const records: Record<string, object> = {
    "mx.good.test": { A: ["127.0.0.1"] },
    "mx.plain.test": { A: ["127.0.0.2"] },
    "mx.wrong.test": { A: ["127.0.0.3"] }
  }
  for (const [domain, [mode, mx]] of Object.entries(POLICIES)) {
    records[domain] = { MX: [{ preference: 10, exchange: MX_OF[domain as keyof typeof POLICIES] }] }
    records[`_mta-sts.${domain}`] = { TXT: ["v=STSv1; id=20260504"] }
    records[`mta-sts.${domain}`] = { A: ["127.0.0.1"] }
    policies.set(domain, { body: policyText(mode, [mx]) })
  }
  rig = await startOutbound(good.port, records, { HERALD_MTA_STS_PORT: String(policies.port), HERALD_TLS_CA_FILE: ca.caFile })
})
afterAll(async () => {
  await rig?.stop()
  await Promise.all([good?.close(), plain?.close(), wrong?.close(), policies?.close()])
})

interface AttemptTls extends Record<string, unknown> {
  readonly outcome: string
  readonly status: string | null
  readonly tls_version: string | null
  readonly tls_verified: boolean | null
  readonly mta_sts_mode: string | null
  readonly tls_failure: string | null
}

const attemptsOf = (deliveryId: string) =>
  query<AttemptTls>(rig.app.databaseUrl,
    "SELECT outcome, status, tls_version, tls_verified, mta_sts_mode, tls_failure FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id",
    [deliveryId])

const received = (sink: SmtpSink, to: string) => sink.received.filter((m) => m.rcptTo.includes(to))

/** Sends to `to` and waits for the delivery to reach one of `states`; its row and its attempts. */
const deliver = async (to: string, states: ReadonlyArray<string>) => {
  const { messageId } = await rig.send(to)
  const row = await waitForState(rig.app, messageId, to, states, { attempts: 1 })
  return { messageId, row, attempts: await attemptsOf(row.id) }
}

describe("MTA-STS enforce", () => {
  it("delivers over TLS with a verified certificate to an MX the policy names, and records it", async () => {
    const to = "ok@enforce-ok.example"
    const { messageId, row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row.state).toBe("sent")
    expect(received(good, to)[0]?.secure).toBe(true)
    expect(attempts[0]).toMatchObject({ outcome: "sent", tls_verified: true, mta_sts_mode: "enforce", tls_failure: null })
    expect(attempts[0]?.tls_version).toMatch(/^TLSv1\.[23]$/)
    // The delivery timeline shows the same.
    const res = await rig.app.request("GET", `/v1/mail/messages/${messageId}`, { token: rig.sender.token })
    expect(res.status).toBe(200)
    const attempt = res.json.timeline.find((e: { type: string }) => e.type === "attempt")
    expect(attempt).toMatchObject({ host: "mx.good.test", tls_verified: true, mta_sts: "enforce", tls_version: attempts[0]?.tls_version })
  })

  it("defers rather than send in plaintext to an MX without STARTTLS (a stripped STARTTLS)", async () => {
    const to = "stripped@enforce-plain.example"
    const { row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row.state).toBe("deferred")
    expect(received(plain, to)).toEqual([])
    expect(attempts[0]).toMatchObject({ outcome: "deferred", tls_verified: false, mta_sts_mode: "enforce", tls_failure: "starttls-not-supported" })
  })

  it("defers when the MX certificate does not name the host", async () => {
    const to = "mismatch@enforce-wrong.example"
    const { row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row.state).toBe("deferred")
    expect(received(wrong, to)).toEqual([])
    expect(attempts[0]).toMatchObject({ outcome: "deferred", mta_sts_mode: "enforce", tls_failure: "certificate-host-mismatch" })
  })

  it("defers when the policy names none of the MX hosts", async () => {
    const to = "unnamed@enforce-unnamed.example"
    const { row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row).toMatchObject({ state: "deferred", last_status: "4.7.5" })
    expect(row.last_reply).toMatch(/no MX host of enforce-unnamed\.example \(mx\.good\.test\) is named by its enforce policy/)
    expect(received(good, to)).toEqual([])
    expect(attempts[0]).toMatchObject({ mta_sts_mode: "enforce", tls_failure: "validation-failure" })
  })
})

describe("MTA-STS testing and none", () => {
  it("testing delivers as before and records the certificate that did not verify", async () => {
    const to = "t@testing-wrong.example"
    const { row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row.state).toBe("sent")
    expect(received(wrong, to)[0]?.secure).toBe(true)
    expect(attempts[0]).toMatchObject({ tls_verified: false, mta_sts_mode: "testing", tls_failure: "certificate-host-mismatch" })
  })

  it("testing delivers in plaintext where there is no STARTTLS, and records it", async () => {
    const to = "t@testing-plain.example"
    const { row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row.state).toBe("sent")
    expect(received(plain, to)[0]?.secure).toBe(false)
    expect(attempts[0]).toMatchObject({ tls_version: null, tls_verified: false, mta_sts_mode: "testing", tls_failure: "starttls-not-supported" })
  })

  it("none is no policy: opportunistic as everywhere else", async () => {
    const to = "n@none-plain.example"
    const { row, attempts } = await deliver(to, ["sent", "deferred", "failed"])
    expect(row.state).toBe("sent")
    expect(received(plain, to)).toHaveLength(1)
    expect(attempts[0]).toMatchObject({ mta_sts_mode: null })
  })
})
