/**
 * The DKIM signer (src/mta/dkim.ts) against an independent verifier (mailauth's dkimVerify) with
 * the public key served by a resolver stub: folded headers, trailing whitespace, an empty body,
 * bare-LF input, repeated headers. Also the byte-bounded cache that keeps composed and signed
 * messages in Delivery.ts.
 */
import { generateKeyPairSync } from "node:crypto"
import { dkimVerify } from "mailauth/lib/dkim/verify.js"
import { describe, expect, it } from "vitest"
import { prepareKey, relaxedBody, relaxedHeader, signMessage } from "../../src/mta/dkim.ts"
import { ByteBoundedCache } from "../../src/mta/lookup-cache.ts"

const { privateKey, publicKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "der" }
})
const key = prepareKey("sign.example", "s1", privateKey)
const record = `v=DKIM1; k=rsa; p=${publicKey.toString("base64")}`

const verify = async (signed: Buffer) => {
  const result = await dkimVerify(signed, {
    resolver: async (name, type) => {
      if (type === "TXT" && name === "s1._domainkey.sign.example") return [[record]]
      throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
    }
  })
  return result.results
}

const crlf = (lines: ReadonlyArray<string>) => lines.join("\r\n")

describe("DKIM signing (relaxed/relaxed, rsa-sha256)", () => {
  it("passes mailauth for a message with folded headers and trailing whitespace", async () => {
    const raw = Buffer.from(crlf([
      "From: \"Sender Name\" <a@sign.example>",
      "To: one@dest.example,\r\n  two@dest.example,\t\r\n\tthree@dest.example",
      "Subject:   A   subject \t with   spaces   ",
      "Date: Sun, 22 Nov 2026 10:00:00 +0000",
      "Message-ID: <m1@sign.example>",
      "X-Not-Signed: whatever",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Hello   there  \t",
      "  indented line",
      "",
      "trailing blank lines follow   ",
      "",
      "",
      ""
    ]))
    const signed = await signMessage(raw, key)
    expect(signed.toString("latin1")).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=sign\.example;/)
    const [result] = await verify(signed)
    expect(result).toMatchObject({ signingDomain: "sign.example", status: { result: "pass" } })
  })

  it("passes for an empty body and for a message with no body separator", async () => {
    const empty = Buffer.from("From: a@sign.example\r\nSubject: empty\r\n\r\n")
    expect((await verify(await signMessage(empty, key)))[0]?.status.result).toBe("pass")
    const headersOnly = Buffer.from("From: a@sign.example\r\nSubject: none")
    const signed = await signMessage(headersOnly, key)
    expect(signed.toString("latin1")).toMatch(/Subject: none\r\n\r\n$/)
    expect((await verify(signed))[0]?.status.result).toBe("pass")
  })

  it("turns bare LF into CRLF and signs what it sends", async () => {
    const raw = Buffer.from("From: a@sign.example\nTo: b@dest.example\nSubject: lf\n  folded\n\nline one  \nline two\n\n")
    const signed = await signMessage(raw, key)
    expect(signed.toString("latin1")).not.toMatch(/[^\r]\n/)
    expect((await verify(signed))[0]?.status.result).toBe("pass")
  })

  it("signs repeated headers and 8-bit bytes unchanged, and fails once the body is altered", async () => {
    const raw = Buffer.concat([
      Buffer.from("From: a@sign.example\r\nTo: b@dest.example\r\nCc: c1@dest.example\r\nCc: c2@dest.example\r\n"),
      Buffer.from("Subject: caf\u00e9 \u2713\r\n\r\nbody \u00fcml\u00e4ut \u2603\r\n", "utf8")
    ])
    const signed = await signMessage(raw, key)
    expect(signed.subarray(signed.length - raw.length).equals(raw)).toBe(true)
    expect(signed.toString("latin1")).toMatch(/h=from:subject:to:cc:cc;/)
    expect((await verify(signed))[0]?.status.result).toBe("pass")
    const tampered = Buffer.from(signed.toString("latin1").replace("body", "bodY"), "latin1")
    expect((await verify(tampered))[0]?.status.result).not.toBe("pass")
  })

  it("canonicalises as RFC 6376 §3.4.5 shows", () => {
    expect(relaxedHeader("A: X")).toBe("a:X")
    expect(relaxedHeader("B : Y\t\r\n\tZ  ")).toBe("b:Y Z")
    expect(relaxedBody(" C \r\nD \t E\r\n\r\n\r\n")).toBe(" C\r\nD E\r\n")
    expect(relaxedBody("")).toBe("")
    expect(relaxedBody("\r\n\r\n")).toBe("")
    expect(relaxedBody("x")).toBe("x\r\n")
  })

  it("signs many messages concurrently (off the event loop) and each one verifies", async () => {
    const raws = Array.from({ length: 40 }, (_, i) => Buffer.from(`From: a@sign.example\r\nSubject: n${i}\r\n\r\nbody ${i}\r\n`))
    const signed = await Promise.all(raws.map((r) => signMessage(r, key)))
    const results = await Promise.all(signed.map(verify))
    expect(results.every((r) => r[0]?.status.result === "pass")).toBe(true)
  })
})

describe("ByteBoundedCache", () => {
  it("evicts the least recently used entries once the total bytes pass the budget", () => {
    const cache = new ByteBoundedCache<string>(100, (v) => v.length)
    cache.set("a", "x".repeat(40))
    cache.set("b", "x".repeat(40))
    expect(cache.get("a")).toBeDefined() // a is now the most recently used
    cache.set("c", "x".repeat(40))
    expect(cache.get("b")).toBeUndefined()
    expect(cache.get("a")).toBeDefined()
    expect(cache.get("c")).toBeDefined()
    expect(cache.bytes).toBe(80)
    expect(cache.size).toBe(2)
  })

  it("keeps the byte count right when a key is replaced and never holds an entry over the budget", () => {
    const cache = new ByteBoundedCache<string>(100, (v) => v.length)
    cache.set("a", "x".repeat(30))
    cache.set("a", "x".repeat(50))
    expect(cache.bytes).toBe(50)
    cache.set("huge", "x".repeat(101))
    expect(cache.get("huge")).toBeUndefined()
    expect(cache.get("a")).toBeDefined()
    expect(cache.bytes).toBe(50)
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, "x".repeat(7))
    expect(cache.bytes).toBeLessThanOrEqual(100)
    expect(cache.size).toBe(14)
  })
})
