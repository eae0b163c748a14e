/**
 * The start-up warnings about DNS records that cannot work (src/platform/domains/startup-warnings.ts):
 * a bare HERALD_HOSTNAME is said in production only (issue 31: said at every start of a trial on a
 * laptop, where nothing could be done about it); a smarthost without an SPF include in both.
 */
import { Option } from "effect"
import { describe, expect, it } from "vitest"
import { dnsConfigProblems } from "../../src/platform/domains/startup-warnings.ts"

const base = { hostname: "vm", smarthostConfigured: false, smarthostSpfInclude: Option.none<string>() }

describe("start-up DNS warnings", () => {
  it("names a bare HERALD_HOSTNAME in production, with the fix, and not in development", () => {
    const production = dnsConfigProblems({ ...base, env: "production" })
    expect(production).toHaveLength(1)
    expect(production[0]).toMatch(/^HERALD_HOSTNAME "vm" is a bare machine name .* set HERALD_HOSTNAME to this host's public DNS name$/)
    expect(dnsConfigProblems({ ...base, env: "development" })).toEqual([])
    expect(dnsConfigProblems({ ...base, env: "production", hostname: "mta.example.com" })).toEqual([])
  })

  it("names a smarthost without an SPF include in either environment", () => {
    for (const env of ["development", "production"] as const) {
      const lines = dnsConfigProblems({ ...base, hostname: "mta.example.com", env, smarthostConfigured: true })
      expect(lines).toEqual([expect.stringMatching(/^HERALD_SMARTHOST is set without HERALD_SMARTHOST_SPF_INCLUDE/)])
    }
    expect(dnsConfigProblems({ ...base, hostname: "mta.example.com", env: "production", smarthostConfigured: true, smarthostSpfInclude: Option.some("relay.example") })).toEqual([])
  })
})
