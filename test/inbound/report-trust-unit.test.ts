/**
 * Which authentication results make a report's sender a feedback loop (src/inbound/processor/
 * trust.ts): a passing DKIM signature or SPF of a listed domain, aligned with the single From:
 * address — a signature of the forger's own domain, or a listed domain's signature on a report
 * from elsewhere, is not enough; a DNS failure leaves it open (retried), not refused.
 */
import type { AuthenticateResult } from "mailauth"
import { describe, expect, it } from "vitest"
import { feedbackLoopOf, listedDomainOf } from "../../src/inbound/processor/trust.ts"

const result = (
  from: ReadonlyArray<string>,
  dkim: ReadonlyArray<readonly [string, string]>,
  spf: readonly [string, string] | false = false
) => ({
  dkim: { headerFrom: [...from], envelopeFrom: false, results: dkim.map(([signingDomain, r]) => ({ signingDomain, status: { result: r }, info: "" })) },
  spf: spf === false ? false : { domain: spf[0], "client-ip": "192.0.2.1", status: { result: spf[1] }, header: "", info: "" },
  dmarc: false,
  arc: false,
  bimi: false,
  headers: ""
}) as unknown as AuthenticateResult

describe("feedback-loop authentication", () => {
  it("finds the listed domain a reporter's domain is under", () => {
    expect(listedDomainOf("arf.mail.yahoo.com")).toBe("yahoo.com")
    expect(listedDomainOf("rackspacefbl.senderscore.net")).toBe("rackspacefbl.senderscore.net")
    expect(listedDomainOf("notyahoo.com")).toBeNull()
  })

  it.each([
    ["a passing DKIM signature of the listed domain", result(["fbl@yahoo.com"], [["yahoo.com", "pass"]]), { _tag: "Authenticated", as: "dkim yahoo.com" }],
    ["a passing signature of a subdomain", result(["fbl@arf.mail.yahoo.com"], [["mail.yahoo.com", "pass"]]), { _tag: "Authenticated", as: "dkim mail.yahoo.com" }],
    ["SPF passing for the listed domain", result(["fbl@aol.com"], [], ["aol.com", "pass"]), { _tag: "Authenticated", as: "spf aol.com" }]
  ])("accepts %s", (_name, auth, expected) => {
    expect(feedbackLoopOf(auth)).toEqual(expected)
  })

  it.each([
    ["no signature at all", result(["fbl@yahoo.com"], [])],
    ["a failing signature", result(["fbl@yahoo.com"], [["yahoo.com", "fail"]])],
    ["the forger's own passing signature", result(["fbl@yahoo.com"], [["evil.test", "pass"]])],
    ["a listed domain's signature on a report from an unlisted domain", result(["fbl@evil.test"], [["yahoo.com", "pass"]])],
    ["another listed domain's signature", result(["fbl@yahoo.com"], [["aol.com", "pass"]])],
    ["SPF passing for another domain", result(["fbl@yahoo.com"], [], ["evil.test", "pass"])],
    ["two From: addresses", result(["fbl@evil.test", "fbl@yahoo.com"], [["yahoo.com", "pass"]])]
  ])("refuses %s", (_name, auth) => {
    const trust = feedbackLoopOf(auth)
    expect(trust).toMatchObject({ _tag: "Refused" })
    expect((trust as { reason: string }).reason).toMatch(/^not from an authenticated feedback loop/)
  })

  it("leaves it open when a DNS failure kept a signature from being checked", () => {
    expect(feedbackLoopOf(result(["fbl@yahoo.com"], [["yahoo.com", "temperror"]]))).toBe("unavailable")
  })
})
