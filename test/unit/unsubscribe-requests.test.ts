/**
 * The pure parts of the unsubscribe paths: the one-click form body in both encodings RFC 8058
 * allows (src/bulk/public/form-body.ts), and the token-shaped words of a mailto unsubscribe's
 * Subject as mail clients write it back (src/inbound/parse/unsubscribe-request.ts).
 */
import { describe, expect, it } from "vitest"
import { formFields } from "../../src/bulk/public/form-body.ts"
import { makeTokens, MAX_TOKEN_LENGTH } from "../../src/bulk/public/tokens.ts"
import { unsubscribeToken } from "../../src/bulk/public/unsubscribe-link.ts"
import {
  isUnsubscribeRequest,
  MAX_CANDIDATE_LENGTH,
  tokenCandidates,
  understandUnsubscribeRequest
} from "../../src/inbound/parse/unsubscribe-request.ts"

const token = unsubscribeToken(makeTokens("secret"), { accountId: "acc_1", email: "ada@example.org", source: "cp_1" })

describe("one-click form bodies", () => {
  it("reads urlencoded and multipart bodies, first value of a field", () => {
    const urlencoded = formFields("application/x-www-form-urlencoded; charset=utf-8", Buffer.from("List-Unsubscribe=One-Click&page=1&page=2"))
    expect(urlencoded && Object.fromEntries(urlencoded)).toEqual({ "List-Unsubscribe": "One-Click", page: "1" })
    const multipart = [
      "preamble",
      "--XyZ",
      'Content-Disposition: form-data; name="List-Unsubscribe"',
      "",
      "One-Click",
      "--XyZ",
      "Content-Disposition: form-data; name=page",
      "Content-Type: text/plain",
      "",
      "1",
      "--XyZ--",
      "epilogue"
    ].join("\r\n")
    const fields = formFields('multipart/form-data; boundary="XyZ"', Buffer.from(multipart))
    expect(fields && Object.fromEntries(fields)).toEqual({ "List-Unsubscribe": "One-Click", page: "1" })
  })

  it("reads nothing from other content types or a multipart without its boundary", () => {
    expect(formFields("application/json", Buffer.from('{"List-Unsubscribe":"One-Click"}'))).toBeNull()
    expect(formFields(undefined, Buffer.from("List-Unsubscribe=One-Click"))).toBeNull()
    expect(formFields("multipart/form-data", Buffer.from("--x\r\n\r\n"))).toBeNull()
  })
})

describe("mailto unsubscribe subjects", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    [token, [token]],
    [`Re: ${token}`, [token]],
    [`RE:  Fwd: [list] <${token}>.`, [token]],
    [`(${token}), please`, [token]],
    ["unsubscribe me please", []],
    ["see example.com or a.b", []],
    ["", []]
  ]
  for (const [subject, expected] of cases) {
    it(`finds ${expected.length} candidate(s) in ${JSON.stringify(subject.slice(0, 30))}`, () => {
      expect(tokenCandidates(subject)).toEqual(expected)
    })
  }

  it("takes words as long as bulk's longest token, and no longer (inbound restates bulk's bound)", () => {
    expect(MAX_CANDIDATE_LENGTH).toBe(MAX_TOKEN_LENGTH)
  })

  it("keeps at most four candidates", () => {
    expect(tokenCandidates(Array.from({ length: 10 }, () => token).join(" "))).toHaveLength(4)
  })

  it("reads the Subject from the header only, folded and encoded", () => {
    const raw = Buffer.from(`From: a@b.test\r\nSubject: =?utf-8?q?R=C3=A9?=:\r\n ${token}\r\n\r\nbody with ${token.replace(/^./, "Z")}\r\n`)
    expect(understandUnsubscribeRequest(raw)).toEqual({ kind: "unsubscribe", tokens: [token] })
    expect(understandUnsubscribeRequest(Buffer.from("garbage"))).toEqual({ kind: "unsubscribe", tokens: [] })
  })

  it("knows the unsubscribe address whatever its case", () => {
    expect(isUnsubscribeRequest(["x@b.test", "Unsubscribe@Bounces.Example"], "unsubscribe", "bounces.example")).toBe(true)
    expect(isUnsubscribeRequest(["unsubscribe@other.example", "fbl@bounces.example"], "unsubscribe", "bounces.example")).toBe(false)
  })
})
