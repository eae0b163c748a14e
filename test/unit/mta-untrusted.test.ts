/**
 * The MTA's pure rules for what it will not trust (issue #22), table-driven: which stored requests
 * it composes (read as unknown: any version's rows, or rows written some other way), when a
 * delivery claimed again and again without an outcome is given up, and which MX addresses
 * production connects to.
 */
import { describe, expect, it } from "vitest"
import { publicTargets } from "../../src/mta/mx.ts"
import { abandonedReason, MAX_CLAIMS_WITHOUT_OUTCOME } from "../../src/mta/retry-schedule.ts"
import { COMPOSE_LIMITS, composeProblem } from "../../src/mta/compose/limits.ts"

const request = (extra: Record<string, unknown> = {}, personalization: Record<string, unknown> = {}) => ({
  personalizations: [{ to: [{ email: "a@b.example" }], ...personalization }],
  from: { email: "hello@sender.example" },
  subject: "Hello",
  content: [{ type: "text/plain", value: "hi" }],
  ...extra
})
const attachments = (n: number) => Array.from({ length: n }, () => ({ content: "QQ==", filename: "a" }))
const headers = (n: number, prefix = "X-P-") => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, "v"]))

describe("composeProblem", () => {
  it.each<[string, unknown, string | null]>([
    ["an ordinary request is composed", request({ attachments: attachments(2), headers: headers(3) }), null],
    ["1,000 attachments are composed", request({ attachments: attachments(1_000) }), null],
    ["1,001 attachments are not", request({ attachments: attachments(1_001) }), "the message has 1001 attachments; at most 1000 can be composed"],
    ["1,000 header fields (message and personalization together) are composed", request({ headers: headers(500) }, { headers: headers(500, "X-Q-") }), null],
    ["1,001 header fields are not", request({ headers: headers(500) }, { headers: headers(501, "X-Q-") }), "the message has more than 1000 custom header fields, the most that can be composed"],
    ["a subject over the header bytes is not", request({ subject: "x".repeat(COMPOSE_LIMITS.maxHeaderBytes + 1) }), `the message's headers hold ${COMPOSE_LIMITS.maxHeaderBytes + 1 + "a@b.example".length} bytes; at most ${COMPOSE_LIMITS.maxHeaderBytes} can be composed`],
    ["header bytes are UTF-8 bytes", request({ headers: { "X-Big": "é".repeat(COMPOSE_LIMITS.maxHeaderBytes / 2) } }), expect.stringMatching(/^the message's headers hold \d+ bytes/) as unknown as string],
    ["a row that is not an object", "hello", "the stored request is not a JSON object"],
    ["null content", null, "the stored request is not a JSON object"],
    ["no personalization", { ...request(), personalizations: [] }, "the stored request has no personalization"],
    ["attachments that are not a list", request({ attachments: { 0: {} } }), "the stored request's attachments are not a list"],
    ["headers that are not an object", request({ headers: ["X-A: b"] }), "the stored request's headers are not an object"]
  ])("%s", (_name, content, expected) => {
    expect(composeProblem(content)).toEqual(expected)
  })
})

describe("abandonedReason", () => {
  it.each<[number, boolean]>([[1, false], [MAX_CLAIMS_WITHOUT_OUTCOME, false], [MAX_CLAIMS_WITHOUT_OUTCOME + 1, true], [40, true]])(
    "a delivery at its claim %i since the last outcome is given up: %s",
    (claims, abandoned) => {
      const reason = abandonedReason(claims)
      expect(reason !== null).toBe(abandoned)
      if (reason !== null) expect(reason).toMatch(new RegExp(`^delivery abandoned after ${claims - 1} claims without an outcome`))
    }
  )
})

describe("publicTargets", () => {
  it("keeps public addresses and says why each private or reserved one is left out", () => {
    const { allowed, refused } = publicTargets([
      { name: "mx1.example", address: "127.0.0.1" },
      { name: "mx1.example", address: "93.184.216.34" },
      { name: "mx2.example", address: "169.254.169.254" },
      { name: "mx3.example", address: "::ffff:10.0.0.1" },
      { name: "mx4.example", address: "2a00:1450:4001:80b::201a" },
      { name: "mx5.example", address: "fd00::1" }
    ])
    expect(allowed.map((t) => t.address)).toEqual(["93.184.216.34", "2a00:1450:4001:80b::201a"])
    expect(refused).toEqual([
      "mx1.example → 127.0.0.1 is a private or reserved address",
      "mx2.example → 169.254.169.254 is a private or reserved address",
      "mx3.example → ::ffff:10.0.0.1 embeds 10.0.0.1 is a private or reserved address",
      "mx5.example → fd00::1 is a private or reserved address"
    ])
  })
})
