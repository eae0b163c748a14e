/**
 * The outbound MTA's pure rules, table-driven: what an SMTP reply means (config/reply-rules.json),
 * which hard bounces suppress the address, the retry schedule and maximum age, which shaping entry
 * a destination gets (config/shaping.json), and VERP return paths that only we can mint.
 */
import { describe, expect, it } from "vitest"
import { type Classification, classifyReply, suppressesAddress } from "../../src/mta/classify.ts"
import { isExpired, retryDelayMs } from "../../src/mta/retry-schedule.ts"
import { loadShapingFile, resolveShaping, type ShapingFile } from "../../src/mta/shaping.ts"
import { decodeVerp, encodeVerp } from "../../src/mta/verp.ts"
import { newId } from "../../src/lib/ids.ts"

type Expected = Pick<Classification, "outcome" | "status"> & Partial<Classification>

describe("classifyReply", () => {
  it.each<[string, number | null, string, Expected]>([
    ["a 250 is sent", 250, "2.0.0 Ok: queued as 4F1", { outcome: "sent", status: "2.0.0", suppress: false, throttle: false }],
    ["a 250 without an enhanced code is sent", 250, "OK", { outcome: "sent", status: "2.0.0" }],
    ["550 5.1.1 bounces hard and suppresses", 550, "5.1.1 <a@b.example>: Recipient address rejected", { outcome: "bounced", status: "5.1.1", category: "hard", suppress: true, throttle: false }],
    ["553 5.1.3 (bad address syntax) suppresses", 553, "5.1.3 Bad recipient address syntax", { outcome: "bounced", status: "5.1.3", suppress: true }],
    ["550 5.2.1 (mailbox disabled) suppresses", 550, "5.2.1 Mailbox disabled", { outcome: "bounced", status: "5.2.1", suppress: true }],
    ["552 5.2.2 (mailbox full) bounces without suppressing", 552, "5.2.2 Mailbox full", { outcome: "bounced", status: "5.2.2", category: "hard", suppress: false }],
    ["550 5.7.1 (policy) bounces without suppressing", 550, "5.7.1 Message rejected as spam", { outcome: "bounced", status: "5.7.1", category: "hard", suppress: false }],
    ["554 5.3.4 (message too big) bounces without suppressing", 554, "5.3.4 Message too big for system", { outcome: "bounced", status: "5.3.4", suppress: false }],
    ["550 'user unknown' without a code is 5.1.1 and suppresses", 550, "User unknown", { outcome: "bounced", status: "5.1.1", category: "hard", suppress: true }],
    ["550 'no such mailbox' without a code is 5.1.1 and suppresses", 550, "Sorry, no such mailbox here", { outcome: "bounced", status: "5.1.1", suppress: true }],
    ["a bare 554 bounces as 5.0.0 without suppressing", 554, "Transaction failed", { outcome: "bounced", status: "5.0.0", suppress: false }],
    ["451 4.7.500 server busy (Outlook's throttle) slows the destination", 451, "4.7.500 Server busy. Please try again later from [192.0.2.1]", { outcome: "deferred", status: "4.7.500", category: "soft", throttle: true, suppress: false }],
    ["450 greylisting is deferred and does not slow the destination", 450, "Greylisted, please try again later", { outcome: "deferred", status: "4.7.1", category: "soft", throttle: false, suppress: false }],
    ["451 4.3.0 is deferred without throttling", 451, "4.3.0 Temporary local problem", { outcome: "deferred", status: "4.3.0", throttle: false }],
    ["450 4.2.1 (mailbox busy) is deferred", 450, "4.2.1 Mailbox busy", { outcome: "deferred", status: "4.2.1", throttle: false }],
    ["421 is deferred and throttles", 421, "Service not available, closing transmission channel", { outcome: "deferred", status: "4.0.0", throttle: true }],
    ["421 4.7.0 'too many connections' is deferred and throttles", 421, "4.7.0 Too many connections from your IP", { outcome: "deferred", status: "4.7.0", throttle: true }],
    ["451 4.7.1 is deferred and throttles", 451, "4.7.1 Intrusion prevention active", { outcome: "deferred", status: "4.7.1", throttle: true }],
    ["452 'rate limit exceeded' is deferred and throttles", 452, "Rate limit exceeded", { outcome: "deferred", status: "4.7.0", throttle: true }],
    ["no reply (connection refused) is 4.4.1 deferred", null, "ESOCKET: connect ECONNREFUSED 127.0.0.9:25", { outcome: "deferred", status: "4.4.1", category: "soft", throttle: false, suppress: false }],
    ["no reply (timeout) is 4.4.1 deferred", null, "ETIMEDOUT: Greeting never received", { outcome: "deferred", status: "4.4.1" }]
  ])("%s", (_name, code, text, expected) => {
    expect(classifyReply({ code, text })).toMatchObject(expected)
  })
})

describe("suppressesAddress", () => {
  it.each<[string, string, boolean]>([
    ["5.1.1", "", true],
    ["5.1.10", "Recipient address rejected", true],
    ["5.2.1", "", true],
    ["5.2.2", "Mailbox full", false],
    ["5.3.4", "", false],
    ["5.7.1", "Rejected by policy", false],
    ["5.0.0", "User unknown", true],
    ["5.0.0", "Recipient not found", true],
    ["5.0.0", "Message rejected", false],
    ["4.1.1", "User unknown", false],
    ["4.2.2", "Mailbox full", false]
  ])("%s with %j → %s", (status, text, expected) => {
    expect(suppressesAddress(status, text)).toBe(expected)
  })
})

describe("the retry schedule", () => {
  const MINUTE = 60_000
  it.each<[number, number]>([
    [0, 5], [1, 5], [2, 10], [3, 20], [4, 40], [5, 60], [6, 120], [7, 240], [8, 480], [9, 480], [50, 480]
  ])("waits after attempt %i: %i minutes", (attempts, minutes) => {
    expect(retryDelayMs(attempts)).toBe(minutes * MINUTE)
  })

  it("never shortens a wait, and keeps trying for days at the default maximum age of 120 hours", () => {
    const waits = Array.from({ length: 30 }, (_, i) => retryDelayMs(i + 1))
    for (let i = 1; i < waits.length; i++) expect(waits[i]!).toBeGreaterThanOrEqual(waits[i - 1]!)
    let elapsed = 0
    let attempts = 1
    while (elapsed + retryDelayMs(attempts) < 120 * 60 * MINUTE) elapsed += retryDelayMs(attempts++)
    expect(attempts).toBeGreaterThan(15)
  })

  it.each<[string, number, boolean]>([
    ["younger than the maximum age", 119.9, false],
    ["exactly the maximum age", 120, true],
    ["older than the maximum age", 121, true]
  ])("treats a delivery %s as expired: %s", (_name, hours, expired) => {
    const queuedAt = new Date("2026-11-01T00:00:00Z")
    expect(isExpired(queuedAt, new Date(queuedAt.getTime() + hours * 60 * MINUTE), 120 * 60 * MINUTE)).toBe(expired)
  })
})

describe("resolveShaping", () => {
  const shipped = loadShapingFile(undefined)
  const custom: ShapingFile = {
    default: { max_connections: 3, messages_per_connection: 7, max_messages_per_minute: null },
    providers: [
      { name: "big", domains: ["big.example"], mx_suffixes: ["mx.big.example"], max_connections: 9, messages_per_connection: 50, max_messages_per_minute: 60 },
      { name: "other", domains: ["other.example"], mx_suffixes: ["other-mx.example"], max_connections: 2, messages_per_connection: 5, max_messages_per_minute: 10, backoff_seconds: 15 }
    ]
  }

  it.each<[string, ShapingFile, string, ReadonlyArray<string>, string]>([
    ["a provider's own domain", shipped, "gmail.com", [], "gmail"],
    ["a provider's domain in capitals", shipped, "Outlook.COM", [], "outlook"],
    ["a hosted domain by its MX suffix", shipped, "company.example", ["aspmx.l.google.com"], "gmail"],
    ["a domain hosted at Outlook by its MX suffix", shipped, "corp.example", ["corp-example.mail.protection.outlook.com"], "outlook"],
    ["the domain entry before the MX suffix", custom, "other.example", ["a.mx.big.example"], "other"],
    ["an MX that only ends with the suffix's text", shipped, "x.example", ["mx.notgoogle.com"], "default"],
    ["an unknown domain", shipped, "unknown.example", ["mx.unknown.example"], "default"]
  ])("resolves %s", (_name, file, domain, mx, expected) => {
    expect(resolveShaping(file, domain, mx).name).toBe(expected)
  })

  it("gives an unknown destination a connection cap but no rate cap, and providers their rates", () => {
    expect(resolveShaping(shipped, "unknown.example")).toEqual({ name: "default", maxConnections: 10, messagesPerConnection: 100, maxMessagesPerMinute: null, backoffMs: 60_000 })
    expect(resolveShaping(shipped, "gmail.com").maxMessagesPerMinute).toBe(1200)
    expect(resolveShaping(custom, "y.example", ["mx.big.example"])).toEqual({ name: "big", maxConnections: 9, messagesPerConnection: 50, maxMessagesPerMinute: 60, backoffMs: 60_000 })
  })

  it("takes an entry's own first back-off pause, a minute where it names none", () => {
    expect(resolveShaping(custom, "other.example").backoffMs).toBe(15_000)
    expect(resolveShaping(custom, "unknown.example").backoffMs).toBe(60_000)
  })
})

describe("VERP return paths", () => {
  const secret = "verp-secret-for-tests"

  it("round-trips a delivery id through the envelope sender", () => {
    const id = newId("dlv")
    const address = encodeVerp(id, "bounces.herald.test", secret)
    expect(address).toMatch(new RegExp(`^b-${id}-[0-9a-f]{8}@bounces\\.herald\\.test$`))
    expect(decodeVerp(address, secret)).toBe(id)
    // Some relays fold the local part's case; the tag is hex, so that is harmless.
    expect(decodeVerp(address.replace(/-([0-9a-f]{8})@/, (_m, tag: string) => `-${tag.toUpperCase()}@`), secret)).toBe(id)
  })

  it.each<[string, (address: string, id: string) => string]>([
    ["a forged tag", (a) => a.replace(/-[0-9a-f]{8}@/, "-00000000@")],
    ["another delivery id with this tag", (a, id) => a.replace(id, `${id}0`)],
    ["a tag cut short", (a) => a.replace(/[0-9a-f]@/, "@")],
    ["an address that is not VERP", () => "postmaster@bounces.herald.test"],
    ["a VERP local part without its domain", (a) => a.slice(0, a.indexOf("@"))]
  ])("rejects %s", (_name, tamper) => {
    const id = newId("dlv")
    expect(decodeVerp(tamper(encodeVerp(id, "bounces.herald.test", secret), id), secret)).toBeNull()
  })

  it("rejects an address minted with another secret", () => {
    expect(decodeVerp(encodeVerp(newId("dlv"), "bounces.herald.test", "another-secret"), secret)).toBeNull()
  })
})
