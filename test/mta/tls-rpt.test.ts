/**
 * TLS-RPT (RFC 8460) against local peers: a real appliance delivers to an MTA-STS `enforce` domain
 * (verified TLS) and a `testing` one whose MX certificate names another host; both publish
 * `_smtp._tls` with a `rua`. The day's reports then go out — by mail through the queue as system
 * mail (no account's) to the rua address's MX (an SMTP sink), retried after a 4xx, DKIM-signed with
 * the appliance's key whose record `herald tlsrpt dkim-record` prints, and by an https POST — and
 * parse as RFC 8460 JSON with the sessions counted. Each day goes once.
 */
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"
import { Effect, Layer } from "effect"
import { dkimVerify } from "mailauth/lib/dkim/verify.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MtaConfigLive } from "../../src/mta/MtaConfig.ts"
import { makeTlsRptSender } from "../../src/mta/tls-rpt/TlsRptJob.ts"
import { runMain, servicesOn } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { policyText, type PolicyServer, startPolicyServer } from "../support/policy-server.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts"
import { makeTestCa } from "../support/test-ca.ts"
import { type OutboundRig, startOutbound, until, waitForState } from "./outbound.ts"

let good: SmtpSink
let wrong: SmtpSink
let policies: PolicyServer
let receiver: https.Server
const posts: Array<{ type: string; body: Buffer }> = []
let rig: OutboundRig
let env: Record<string, string>

beforeAll(async () => {
  const ca = makeTestCa()
  good = await startSmtpSink({ tls: ca.issue(["mx.good.test"]) })
  wrong = await startSmtpSink({ host: "127.0.0.3", port: good.port, tls: ca.issue(["someone-else.test"]) })
  policies = await startPolicyServer(ca.issue(["mta-sts.enforced.example", "mta-sts.tested.example"]))
  const rua = ca.issue(["rua.reports.example"])
  receiver = https.createServer({ key: rua.key, cert: rua.cert }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      posts.push({ type: String(req.headers["content-type"]), body: Buffer.concat(chunks) })
      res.writeHead(201).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const ruaUrl = `https://rua.reports.example:${(receiver.address() as AddressInfo).port}/tlsrpt`
  policies.set("enforced.example", { body: policyText("enforce", ["mx.good.test"]) })
  policies.set("tested.example", { body: policyText("testing", ["mx.wrong.test"]) })
  const records = {
    "mx.good.test": { A: ["127.0.0.1"] },
    "mx.wrong.test": { A: ["127.0.0.3"] },
    "rua.reports.example": { A: ["127.0.0.1"] },
    "reports.example": { MX: [{ preference: 10, exchange: "mx.good.test" }] },
    "enforced.example": { MX: [{ preference: 10, exchange: "mx.good.test" }] },
    "_mta-sts.enforced.example": { TXT: ["v=STSv1; id=1"] },
    "mta-sts.enforced.example": { A: ["127.0.0.1"] },
    "_smtp._tls.enforced.example": { TXT: [`v=TLSRPTv1; rua=mailto:tls@reports.example,${ruaUrl},mailto:third@reports.example`] },
    "tested.example": { MX: [{ preference: 10, exchange: "mx.wrong.test" }] },
    "_mta-sts.tested.example": { TXT: ["v=STSv1; id=1"] },
    "mta-sts.tested.example": { A: ["127.0.0.1"] },
    "_smtp._tls.tested.example": { TXT: ["v=TLSRPTv1; rua=mailto:tls@reports.example"] }
  }
  env = { HERALD_MTA_STS_PORT: String(policies.port), HERALD_TLS_CA_FILE: ca.caFile }
  rig = await startOutbound(good.port, records, env)
  env = { ...env, HERALD_DNS_SERVERS: rig.dns.address, HERALD_MX_PORT: String(good.port), HERALD_HOSTNAME: "mta.herald.test" }
})
afterAll(async () => {
  await rig?.stop()
  await Promise.all([good?.close(), wrong?.close(), policies?.close(), new Promise((resolve) => receiver?.close(resolve))])
})

/** The reports of today (UTC) sent by an in-process sender on the appliance's database. */
const sendToday = () =>
  Effect.runPromise(Effect.gen(function*() {
    const sender = yield* makeTlsRptSender
    return yield* sender.sendDay(new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000))
  }).pipe(Effect.provide(MtaConfigLive.pipe(Layer.provideMerge(servicesOn(rig.app.databaseUrl, env)))), Effect.scoped))

/** The gzip report of an RFC 8460 §5.3 mail, parsed. */
const reportOf = (raw: Buffer) => {
  const text = raw.toString("utf8")
  const part = text.slice(text.indexOf("Content-Type: application/tlsrpt+gzip"))
  const base64 = part.slice(part.indexOf("\r\n\r\n") + 4, part.indexOf("\r\n--"))
  return JSON.parse(gunzipSync(Buffer.from(base64.replace(/\s+/g, ""), "base64")).toString("utf8"))
}

describe("TLS-RPT daily reports", () => {
  it("reports each policy domain's sessions in RFC 8460 JSON, by signed mail and https, once per day", async () => {
    for (const to of ["a@enforced.example", "b@tested.example"]) {
      const { messageId } = await rig.send(to)
      expect((await waitForState(rig.app, messageId, to, ["sent", "deferred", "failed"])).state).toBe("sent")
    }
    // The rua's MX answers 4xx at first: the queued report waits for its retry, it is not lost.
    good.replies.set("tls@reports.example", "451 4.3.0 Try again later")
    expect(await sendToday()).toBe(2)
    const reportRows = () =>
      query<{ account_id: string | null; key_id: string | null; origin: string; state: string; attempts: number }>(rig.app.databaseUrl,
        `SELECT m.account_id, m.key_id, m.origin, d.state, d.attempts FROM messages m JOIN deliveries d ON d.message_id = m.id
         WHERE m.origin = 'system' ORDER BY d.id`)
    await until("both reports deferred", async () => {
      const rows = await reportRows()
      return rows.length === 2 && rows.every((r) => r.state === "deferred") ? rows : undefined
    })
    expect(good.received.filter((m) => m.rcptTo.includes("tls@reports.example"))).toEqual([])
    good.replies.delete("tls@reports.example")
    await query(rig.app.databaseUrl, "UPDATE deliveries SET next_attempt_at = now() WHERE state = 'deferred'")
    const mails = await until("two report mails", async () => {
      const found = good.received.filter((m) => m.rcptTo.includes("tls@reports.example"))
      return found.length >= 2 ? found : undefined
    })
    // Queued system mail: no account, no key; sent at the second attempt.
    expect(await until("both reports sent", async () => {
      const rows = await reportRows()
      return rows.every((r) => r.state === "sent") ? rows : undefined
    })).toEqual([1, 2].map(() => ({ account_id: null, key_id: null, origin: "system", state: "sent", attempts: 2 })))
    // At most two destinations: the third is left out.
    expect(good.received.filter((m) => m.rcptTo.includes("third@reports.example"))).toEqual([])

    const reports = mails.map((m) => reportOf(m.raw))
    const enforced = reports.find((r) => r.policies[0].policy["policy-domain"] === "enforced.example")
    const day = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString().slice(0, 10)
    expect(enforced).toEqual({
      "organization-name": "mta.herald.test",
      "date-range": { "start-datetime": `${day}T00:00:00Z`, "end-datetime": `${day}T23:59:59Z` },
      "contact-info": "tlsrpt@bounces.mta.herald.test",
      "report-id": `${day}_enforced.example@mta.herald.test`,
      policies: [{
        policy: {
          "policy-type": "sts",
          "policy-string": ["version: STSv1", "mode: enforce", "mx: mx.good.test", "max_age: 86400"],
          "policy-domain": "enforced.example",
          "mx-host": ["mx.good.test"]
        },
        summary: { "total-successful-session-count": 1, "total-failure-session-count": 0 }
      }]
    })
    const tested = reports.find((r) => r.policies[0].policy["policy-domain"] === "tested.example")
    expect(tested.policies[0].summary).toEqual({ "total-successful-session-count": 0, "total-failure-session-count": 1 })
    expect(tested.policies[0]["failure-details"]).toEqual([{
      "result-type": "certificate-host-mismatch", "receiving-mx-hostname": "mx.wrong.test", "failed-session-count": 1
    }])
    const mail = mails[0]!.raw.toString("utf8")
    expect(mail).toMatch(/^Content-Type: multipart\/report; report-type="tlsrpt"/m)
    expect(mail).toMatch(/^TLS-Report-Domain: (enforced|tested)\.example/m)
    expect(mail).toMatch(/^From: tlsrpt@bounces\.mta\.herald\.test\r$/m)
    // The envelope sender is the MTA's VERP address, as for all mail: a bounce names the delivery.
    expect(mails[0]!.mailFrom).toMatch(/@bounces\.mta\.herald\.test$/)

    // The https destination got the same report.
    expect(posts).toHaveLength(1)
    expect(posts[0]!.type).toBe("application/tlsrpt+gzip")
    expect(JSON.parse(gunzipSync(posts[0]!.body).toString("utf8"))).toEqual(enforced)

    // Signed with the appliance's key, whose record the CLI prints.
    const printed = await runMain(["tlsrpt", "dkim-record"], { DATABASE_URL: rig.app.databaseUrl, HERALD_HOSTNAME: "mta.herald.test" }, 240_000)
    expect(printed.code, printed.stderr).toBe(0)
    const record = JSON.parse(printed.stdout.slice(printed.stdout.indexOf("{")))
    expect(record).toMatchObject({ from: "tlsrpt@bounces.mta.herald.test", type: "TXT", name: "tlsrpt._domainkey.bounces.mta.herald.test" })
    const verified = await dkimVerify(mails[0]!.raw, {
      resolver: async (name: string, type: string) => {
        if (type === "TXT" && name === record.name) return [[record.value]]
        throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
      }
    })
    expect(verified.results[0]?.status?.result).toBe("pass")

    // The day went once: another run (another replica) sends nothing.
    expect(await sendToday()).toBe(0)
  })
})
