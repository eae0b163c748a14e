/**
 * MTA-STS policy discovery (RFC 8461) against real peers — a DNS server publishing the `_mta-sts`
 * and `_smtp._tls` TXT records, an HTTPS server with a certificate from a test CA, PostgreSQL as
 * the shared store — on TestClock: the TXT record and policy file as the RFC writes them, MX
 * names matched against the policy's patterns, the cache refreshed when the TXT id changes, a
 * failed fetch that never downgrades an unexpired policy, a domain with no policy whose failed
 * fetch is retried at most hourly, and a policy host on a private address refused in production.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import { MtaConfigLive } from "../../src/mta/MtaConfig.ts"
import { FAILED_FETCH_RETRY_MS, MtaSts } from "../../src/mta/mta-sts/MtaSts.ts"
import { mxMatches, parsePolicy, parseStsRecord, parseTlsRptRecord } from "../../src/mta/mta-sts/policy.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { startDnsServer } from "../support/dns-server.ts"
import { policyText, startPolicyServer } from "../support/policy-server.ts"
import { makeTestCa } from "../support/test-ca.ts"

const START = Date.parse("2026-05-04T10:00:00.000Z")
const MINUTE = 60_000

describe("the MTA-STS record, policy and MX patterns (RFC 8461 §3, §4.1)", () => {
  it("reads the TXT record's id, and ignores a second or malformed STSv1 record", () => {
    expect(parseStsRecord(["v=STSv1; id=20160831085700Z;"])).toBe("20160831085700Z")
    expect(parseStsRecord(["some other record", "v=STSv1;id=abc"])).toBe("abc")
    expect(parseStsRecord(["v=STSv1; id=a", "v=STSv1; id=b"])).toBeNull()
    expect(parseStsRecord(["v=STSv1; id=not-alnum!"])).toBeNull()
    expect(parseTlsRptRecord(["v=TLSRPTv1; rua=mailto:tls@example.com,https://r.example/tls, ftp://x"]))
      .toEqual(["mailto:tls@example.com", "https://r.example/tls"])
  })

  it("parses the policy file and refuses an invalid one", () => {
    expect(parsePolicy(policyText("enforce", ["mail.example.com", "*.example.net"], 604800))).toMatchObject({
      mode: "enforce", mx: ["mail.example.com", "*.example.net"], maxAge: 604800
    })
    expect(parsePolicy("version: STSv1\nmode: enforce\nmax_age: 100\n")).toBe("a enforce policy names no mx")
    expect(parsePolicy("version: STSv2\nmode: none\nmax_age: 1\n")).toBe("version is not STSv1")
    expect(parsePolicy("<html>redirected</html>")).toMatch(/malformed line/)
  })

  it("matches a wildcard against exactly one leftmost label", () => {
    const patterns = ["mail.example.com", "*.example.net"]
    expect(mxMatches(patterns, "MAIL.example.com.")).toBe(true)
    expect(mxMatches(patterns, "mx1.example.net")).toBe(true)
    expect(mxMatches(patterns, "example.net")).toBe(false)
    expect(mxMatches(patterns, "a.b.example.net")).toBe(false)
    expect(mxMatches(patterns, "evil-mail.example.com")).toBe(false)
  })
})

describe("MTA-STS policy discovery on TestClock", () => {
  const ca = makeTestCa()
  const serverCert = ca.issue(["mta-sts.enforced.example", "mta-sts.flaky.example", "mta-sts.private.example"])

  const rig = (env: Record<string, string>) =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const dns = yield* Effect.acquireRelease(Effect.promise(() => startDnsServer({})), (d) => Effect.promise(() => d.close()))
      const server = yield* Effect.acquireRelease(Effect.promise(() => startPolicyServer(serverCert)), (s) => Effect.promise(() => s.close()))
      const layer = MtaSts.Default.pipe(
        Layer.provide(MtaConfigLive),
        Layer.provideMerge(servicesOn(databaseUrl, {
          HERALD_DNS_SERVERS: dns.address, HERALD_MTA_STS_PORT: String(server.port), HERALD_TLS_CA_FILE: ca.caFile, ...env
        }))
      )
      const context = yield* Layer.build(layer)
      const sts = Context.get(context, MtaSts)
      /** The policy a delivery to `domain` would follow now, through the built services. */
      const policyFor = (domain: string) => Effect.provide(sts.policyFor(domain), context)
      const row = (domain: string) =>
        Effect.promise(() => query(databaseUrl, "SELECT * FROM mta_sts_policies WHERE domain = $1", [domain])).pipe(Effect.map((r) => r[0]))
      return { dns, server, policyFor, row }
    })

  it.scoped("fetches under a new TXT id, and keeps an unexpired policy when a later fetch fails (no downgrade)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const { dns, server, policyFor, row } = yield* rig({})
      dns.set("mta-sts.enforced.example", { A: ["127.0.0.1"] })
      dns.set("_mta-sts.enforced.example", { TXT: ["v=STSv1; id=first"] })
      dns.set("_smtp._tls.enforced.example", { TXT: ["v=TLSRPTv1; rua=mailto:tls-reports@enforced.example"] })
      server.set("enforced.example", { body: policyText("enforce", ["mx.enforced.example"]) })
      expect(yield* policyFor("enforced.example")).toEqual({
        domain: "enforced.example", mode: "enforce", mx: ["mx.enforced.example"]
      })
      expect(yield* row("enforced.example")).toMatchObject({ txt_id: "first", policy_txt_id: "first", tlsrpt_rua: ["mailto:tls-reports@enforced.example"] })
      expect(server.requests).toEqual(["mta-sts.enforced.example"])

      // Within the process's few minutes: no lookup, no fetch.
      yield* TestClock.adjust(MINUTE)
      yield* policyFor("enforced.example")
      expect(server.requests).toHaveLength(1)

      // A new id: fetched again. The fetch fails (a 500, then a redirect): the unexpired policy stays.
      dns.set("_mta-sts.enforced.example", { TXT: ["v=STSv1; id=second"] })
      server.set("enforced.example", { status: 500, body: "oops" })
      yield* TestClock.adjust(6 * MINUTE)
      expect((yield* policyFor("enforced.example"))?.mode).toBe("enforce")
      expect(server.requests).toHaveLength(2)
      expect(yield* row("enforced.example")).toMatchObject({ txt_id: "second", policy_txt_id: "first", policy_mode: "enforce" })
      expect((yield* row("enforced.example"))?.["last_failure"]).toMatch(/HTTP 500/)

      // Past the hour's wait, a redirect is not followed either; the policy is still the first one.
      server.set("enforced.example", { status: 301, body: "", headers: { location: "https://elsewhere.test/" } })
      yield* TestClock.adjust(FAILED_FETCH_RETRY_MS)
      expect((yield* policyFor("enforced.example"))?.mode).toBe("enforce")
      expect((yield* row("enforced.example"))?.["last_failure"]).toMatch(/HTTP 301 \(redirects are not followed\)/)

      // The fetch works again: the new policy (testing) replaces the old one.
      server.set("enforced.example", { body: policyText("testing", ["*.enforced.example"]) })
      yield* TestClock.adjust(FAILED_FETCH_RETRY_MS + MINUTE)
      expect(yield* policyFor("enforced.example")).toMatchObject({ mode: "testing", mx: ["*.enforced.example"] })
      expect(yield* row("enforced.example")).toMatchObject({ policy_txt_id: "second", last_failure: null })
    }))

  it.scoped("retries a domain with no policy and a failed fetch at most hourly", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const { dns, server, policyFor } = yield* rig({})
      dns.set("mta-sts.flaky.example", { A: ["127.0.0.1"] })
      dns.set("_mta-sts.flaky.example", { TXT: ["v=STSv1; id=1"] })
      server.set("flaky.example", { status: 503, body: "down" })
      const fetches = () => server.requests.filter((h) => h === "mta-sts.flaky.example").length
      expect(yield* policyFor("flaky.example")).toBeNull()
      expect(fetches()).toBe(1)
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust(10 * MINUTE)
        expect(yield* policyFor("flaky.example")).toBeNull()
      }
      expect(fetches()).toBe(1)
      yield* TestClock.adjust(11 * MINUTE)
      yield* policyFor("flaky.example")
      expect(fetches()).toBe(2)
    }))

  it.scoped("refuses a policy host on a private address in production, and fetches it where that is allowed", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const records = (dns: { set: (n: string, r: object) => void }) => {
        dns.set("mta-sts.private.example", { A: ["127.0.0.1"] })
        dns.set("_mta-sts.private.example", { TXT: ["v=STSv1; id=1"] })
      }
      // Production, with policies fetched from the real port 443: the address check refuses loopback before any connection.
      const production = yield* rig({ HERALD_ENV: "production", HERALD_MTA_STS_PORT: "443" })
      records(production.dns)
      production.server.set("private.example", { body: policyText("enforce", ["mx.private.example"]) })
      expect(yield* production.policyFor("private.example")).toBeNull()
      expect((yield* production.row("private.example"))?.["last_failure"]).toBe(
        "the policy host is refused: mta-sts.private.example → 127.0.0.1 is a private or reserved address"
      )
      expect(production.server.requests).toEqual([])

      // The same domain in development: fetched (the check is what stopped it above).
      const development = yield* rig({})
      records(development.dns)
      development.server.set("private.example", { body: policyText("enforce", ["mx.private.example"]) })
      expect((yield* development.policyFor("private.example"))?.mode).toBe("enforce")
    }))
})
