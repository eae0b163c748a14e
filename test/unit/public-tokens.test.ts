/** The public pages' tokens: what one names comes back only whole, for its purpose, before its expiry. */
import { Option } from "effect"
import { describe, expect, it } from "vitest"
import { makeTokens, MAX_TOKEN_LENGTH } from "../../src/bulk/public/tokens.ts"
import { openUnsubscribeToken, unsubscribeHeaders } from "../../src/bulk/public/unsubscribe-link.ts"

const tokens = makeTokens("a-secret-of-the-appliance")
const NOW = Date.parse("2026-11-26T10:00:00Z")

describe("public tokens", () => {
  it("open what they were minted with, as one URL path segment", () => {
    const token = tokens.mint("confirm", ["ls_1", "ct_2"], NOW + 7 * 86_400_000)
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(tokens.open("confirm", token, NOW)).toEqual(Option.some(["ls_1", "ct_2"]))
    expect(tokens.open("unsubscribe", tokens.mint("unsubscribe", ["acc", "x@example.com"]), NOW + 10 * 365 * 86_400_000))
      .toEqual(Option.some(["acc", "x@example.com"]))
  })

  it("refuse another purpose, another secret, a changed payload or tag, and an expired token", () => {
    const token = tokens.mint("confirm", ["ls_1", "ct_2"], NOW + 1000)
    const [payload, tag] = token.split(".") as [string, string]
    const otherPayload = Buffer.from(JSON.stringify([["ls_1", "ct_3"], Math.ceil((NOW + 1000) / 1000)])).toString("base64url")
    const flipped = `${tag.slice(0, -1)}${tag.endsWith("A") ? "B" : "A"}`
    expect(tokens.open("unsubscribe", token, NOW)).toEqual(Option.none())
    expect(makeTokens("another secret").open("confirm", token, NOW)).toEqual(Option.none())
    expect(tokens.open("confirm", `${otherPayload}.${tag}`, NOW)).toEqual(Option.none())
    expect(tokens.open("confirm", `${payload}.${flipped}`, NOW)).toEqual(Option.none())
    expect(tokens.open("confirm", token, NOW + 1000)).toEqual(Option.none())
  })

  it("refuse every other spelling of the tag, including the ones base64url decodes to the same bytes", () => {
    const token = tokens.mint("click", ["dlv_1", "cp_1", "0"])
    const [payload, tag] = token.split(".") as [string, string]
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    // The last character of a 16-byte tag carries 2 bits; 15 other characters decode the same.
    const others = [...alphabet].filter((c) => c !== tag.at(-1)).map((c) => `${payload}.${tag.slice(0, -1)}${c}`)
    expect(others).toHaveLength(63)
    for (const other of others) expect(tokens.open("click", other, NOW)).toEqual(Option.none())
    expect(tokens.open("click", token, NOW)).toEqual(Option.some(["dlv_1", "cp_1", "0"]))
  })

  it("refuse malformed and oversized tokens without decoding them", () => {
    for (const bad of ["", ".", "abc", "a.b.c", "a b.c", "%41.b", `${"a".repeat(MAX_TOKEN_LENGTH)}.b`]) {
      expect(tokens.open("click", bad, NOW)).toEqual(Option.none())
    }
  })
})

describe("unsubscribe link", () => {
  it("names the account, the address and the source, in both URIs of List-Unsubscribe", () => {
    const headers = unsubscribeHeaders(tokens, { baseUrl: "https://mail.example.com/", bounceDomain: "bounces.example.com" }, {
      accountId: "acc_1",
      email: "Ann@Example.com",
      source: "cp_9"
    })
    expect(headers["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click")
    const match = /^<https:\/\/mail\.example\.com\/u\/([^>]+)>, <mailto:unsubscribe@bounces\.example\.com\?subject=([^>]+)>$/.exec(headers["List-Unsubscribe"])
    expect(match).not.toBeNull()
    expect(match![1]).toBe(match![2])
    expect(openUnsubscribeToken(tokens, match![1]!, NOW)).toEqual(Option.some({ accountId: "acc_1", email: "Ann@Example.com", source: "cp_9" }))
    expect(openUnsubscribeToken(tokens, tokens.mint("confirm", ["acc_1", "Ann@Example.com", ""]), NOW)).toEqual(Option.none())
  })
})
