/**
 * The webhook building blocks: signatures, masking, the retry ladder, the SSRF guard, the
 * dispatcher's attempt slots, one attempt.
 */
import * as http from "node:http"
import * as https from "node:https"
import { Deferred, Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { burstOffsetMs, MAX_ATTEMPTS, nextStep } from "../../src/webhooks/ladder.ts"
import { ATTEMPT_TIMEOUT_MS, postWebhook } from "../../src/webhooks/post.ts"
import { generateWebhookSecret, maskSecret } from "../../src/webhooks/secret.ts"
import { signPayload, verifySignature } from "../../src/webhooks/signature.ts"
import { makeSlots } from "../../src/webhooks/slots.ts"
import { checkAddresses, checkWebhookUrlSync, embeddedV4, forbiddenAddress, type UrlPolicy } from "../../src/lib/url-check.ts"
import { selfSignedCert } from "../support/smtp-sink.ts"

/** The whole check as WebhookSender makes it: the URL alone, then (for a host name) its addresses. */
const checkWebhookUrl = async (raw: string, policy: UrlPolicy, lookup: (host: string) => Promise<ReadonlyArray<string>>) => {
  const now = checkWebhookUrlSync(raw, policy)
  return "ok" in now ? now : checkAddresses(now, await lookup(now.host), policy)
}

describe("signatures", () => {
  const ts = "2026-11-22T10:00:00.000Z"
  it("is sha256=<hex HMAC-SHA256(secret, timestamp.body)>", () => {
    // Known answer: printf '2026-11-22T10:00:00.000Z.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
    expect(signPayload("whsec_test", ts, "{\"a\":1}")).toBe("sha256=0952cd0cbd3b3d2858af8047a66dfb07b72c724b36c3345c73327602c678945c")
  })
  it("verifies its own signature, and refuses a changed body, another secret or a stale timestamp", () => {
    const sig = signPayload("s1", ts, "body")
    expect(verifySignature("s1", ts, "body", sig, new Date(ts))).toBe(true)
    expect(verifySignature("s1", ts, "body!", sig, new Date(ts))).toBe(false)
    expect(verifySignature("s2", ts, "body", sig, new Date(ts))).toBe(false)
    expect(verifySignature("s1", ts, "body", sig, new Date(Date.parse(ts) + 6 * 60_000))).toBe(false)
  })
})

describe("secrets", () => {
  it("are random and masked as a fixed prefix, eight dots and the last four", () => {
    const secret = generateWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(generateWebhookSecret()).not.toBe(secret)
    expect(maskSecret(secret)).toBe(`whsec_••••••••${secret.slice(-4)}`)
  })
})

describe("the retry ladder", () => {
  it.each([
    [1, { _tag: "burst", delayMs: 1_000 }],
    [2, { _tag: "burst", delayMs: 4_000 }],
    [3, { _tag: "burst", delayMs: 20_000 }],
    [4, { _tag: "queued", delayMs: 300_000 }],
    [5, { _tag: "queued", delayMs: 1_800_000 }],
    [6, { _tag: "queued", delayMs: 7_200_000 }],
    [7, { _tag: "queued", delayMs: 21_600_000 }],
    [8, { _tag: "queued", delayMs: 86_400_000 }],
    [10, { _tag: "queued", delayMs: 86_400_000 }],
    [11, { _tag: "dead" }]
  ])("after %i failed attempts: %o", (attempts, step) => {
    expect(nextStep(attempts)).toEqual(step)
  })
  it("has eleven attempts in all", () => expect(MAX_ATTEMPTS).toBe(11))
  it("times the burst from the first failure: 1 s, 5 s, 25 s", () => {
    expect([1, 2, 3, 4].map(burstOffsetMs)).toEqual([1_000, 5_000, 25_000, null])
  })
})

describe("the SSRF guard", () => {
  it.each([
    // IPv4: loopback, private, link-local and cloud metadata, CGNAT, this network, multicast, reserved
    "127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "240.0.0.1",
    // IPv6: loopback, unspecified, link-local, ULA, site-local (fec0::/10), multicast, documentation
    "::1", "::", "fe80::1", "fd00::1", "fec0::1", "feff::1", "ff02::1", "2001:db8::1",
    // IPv4-compatible ::/96 (deprecated): refused whatever it embeds
    "::127.0.0.1", "::7f00:1", "::8.8.8.8",
    // IPv4-mapped ::ffff:0:0/96 and IPv4-translated ::ffff:0:0:0/96 of private addresses, in every notation
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::FFFF:10.0.0.1", "0:0:0:0:0:ffff:a9fe:a9fe", "::ffff:0:127.0.0.1",
    // NAT64 64:ff9b::/96 of a private address reaches that address; local-use NAT64 64:ff9b:1::/48 is private
    "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1", "64:ff9b::7f00:1", "64:ff9b:1::a00:1", "64:ff9b:1::808:808",
    // 6to4 2002::/16 of a private address
    "2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1",
    // a scoped address
    "fe80::1%eth0"
  ])("refuses %s", (ip) => expect(forbiddenAddress(ip)).not.toBeNull())
  it.each([
    "93.184.216.34", "8.8.8.8", "2606:2800:220:1:248:1893:25c8:1946", "2001:4860:4860::8888",
    // IPv6 forms of public IPv4 addresses follow the IPv4 address
    "::ffff:8.8.8.8", "::ffff:0:808:808", "64:ff9b::8.8.8.8", "2002:808:808::1"
  ])("allows %s", (ip) => expect(forbiddenAddress(ip)).toBeNull())
  it("reads IPv4 inside IPv6 addresses in any notation", () => {
    expect(embeddedV4("::ffff:7f00:1")).toBe("127.0.0.1")
    expect(embeddedV4("64:ff9b::0a00:0001")).toBe("10.0.0.1")
    expect(embeddedV4("2002:c0a8:0101:5::1")).toBe("192.168.1.1")
    expect(embeddedV4("2606:2800:220:1::1")).toBeNull()
  })

  const production = { production: true, allowPrivate: false }
  it("refuses http in production, a name resolving to a private address, and literal private hosts", async () => {
    expect((await checkWebhookUrl("http://93.184.216.34/hook", production, async () => [])).ok).toBe(false)
    expect((await checkWebhookUrl("https://internal.example/hook", production, async () => ["10.1.2.3"])).ok).toBe(false)
    expect((await checkWebhookUrl("https://[::1]/hook", production, async () => [])).ok).toBe(false)
    expect((await checkWebhookUrl("https://[::127.0.0.1]/hook", production, async () => [])).ok).toBe(false)
    expect((await checkWebhookUrl("https://[::ffff:169.254.169.254]/latest", production, async () => [])).ok).toBe(false)
    expect((await checkWebhookUrl("https://mixed.example/hook", production, async () => ["93.184.216.34", "64:ff9b::10.0.0.1"])).ok).toBe(false)
    const ok = await checkWebhookUrl("https://hooks.example/in", production, async () => ["93.184.216.34"])
    expect(ok).toMatchObject({ ok: true, address: "93.184.216.34" })
  })
  it("lets development allow private receivers only when told to", async () => {
    expect((await checkWebhookUrl("http://127.0.0.1:9/h", { production: false, allowPrivate: false }, async () => [])).ok).toBe(false)
    expect((await checkWebhookUrl("http://127.0.0.1:9/h", { production: false, allowPrivate: true }, async () => [])).ok).toBe(true)
  })
})

describe("the check without DNS", () => {
  const production = { production: true, allowPrivate: false }
  it("answers for an IP address at once, and hands a name back to be resolved", () => {
    expect(checkWebhookUrlSync("https://10.0.0.1/hook", production)).toMatchObject({ ok: false })
    expect(checkWebhookUrlSync("https://93.184.216.34/hook", production)).toMatchObject({ ok: true, address: "93.184.216.34" })
    expect(checkWebhookUrlSync("https://[2606:2800:220:1::1]/hook", production)).toMatchObject({ ok: true, address: "2606:2800:220:1::1" })
    expect(checkWebhookUrlSync("http://93.184.216.34/hook", production)).toMatchObject({ ok: false })
    expect(checkWebhookUrlSync("https://hooks.example/in", production)).toMatchObject({ host: "hooks.example" })
  })
})

describe("the dispatcher's attempt slots", () => {
  /** `n` effects started in slots of `size`, each running until its gate opens. */
  const gated = (size: number, n: number) =>
    Effect.gen(function*() {
      const slots = makeSlots(size)
      const running = new Set<number>()
      const gates = yield* Effect.forEach(Array.from({ length: n }, (_, i) => i), () => Deferred.make<void>())
      const fibers = yield* Effect.forEach(gates, (gate, i) =>
        Effect.fork(slots.withSlot(Effect.acquireUseRelease(Effect.sync(() => running.add(i)), () => Deferred.await(gate), () => Effect.sync(() => running.delete(i))))))
      yield* Effect.yieldNow()
      return { slots, running, gates, fibers }
    })

  it("runs at most their number at once, the next in line when one is done", () =>
    Effect.runPromise(Effect.gen(function*() {
      const { fibers, gates, running, slots } = yield* gated(2, 4)
      expect([...running]).toEqual([0, 1])
      expect(slots.busy()).toBe(4)
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* Fiber.join(fibers[0]!)
      yield* Effect.yieldNow()
      expect([...running].sort()).toEqual([1, 2])
      expect(slots.busy()).toBe(3)
      yield* Effect.forEach(gates, (gate) => Deferred.succeed(gate, undefined))
      yield* Fiber.joinAll(fibers)
      expect(slots.busy()).toBe(0)
    })))

  it("lets a waiter that is interrupted leave the line, and a holder that is interrupted give its slot back", () =>
    Effect.runPromise(Effect.gen(function*() {
      const { fibers, gates, running, slots } = yield* gated(1, 3)
      expect([...running]).toEqual([0])
      yield* Fiber.interrupt(fibers[1]!)
      yield* Fiber.interrupt(fibers[0]!)
      yield* Effect.yieldNow()
      expect([...running]).toEqual([2])
      expect(slots.busy()).toBe(1)
      yield* Deferred.succeed(gates[2]!, undefined)
      yield* Fiber.join(fibers[2]!)
      expect(slots.busy()).toBe(0)
    })))
})

describe("one attempt against a real receiver", () => {
  let server: http.Server
  let port = 0
  const seen: Array<{ headers: http.IncomingHttpHeaders; body: string }> = []
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
        if (req.url === "/ok") res.writeHead(204).end()
        else if (req.url === "/fail") res.writeHead(500).end("x".repeat(5000))
        // /hang: never answers
      })
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
  })

  it("succeeds on a 2xx, connecting to the checked address", async () => {
    const result = await postWebhook({ url: new URL(`http://receiver.example:${port}/ok`), address: "127.0.0.1", body: "{}", headers: { "x-test": "1" } })
    expect(result).toMatchObject({ ok: true, httpCode: 204, error: null })
    expect(seen.at(-1)!.headers.host).toBe(`receiver.example:${port}`)
  })

  it("fails on a 500 and keeps at most 2 KB of the answer", async () => {
    const result = await postWebhook({ url: new URL(`http://127.0.0.1:${port}/fail`), address: "127.0.0.1", body: "{}", headers: {} })
    expect(result).toMatchObject({ ok: false, httpCode: 500 })
    expect(result.responseBody.length).toBe(2048)
  })

  it("cuts a receiver that hangs at the timeout (10 s by default)", async () => {
    expect(ATTEMPT_TIMEOUT_MS).toBe(10_000)
    const result = await postWebhook({ url: new URL(`http://127.0.0.1:${port}/hang`), address: "127.0.0.1", body: "{}", headers: {}, timeoutMs: 300 })
    expect(result.ok).toBe(false)
    expect(result.error).toContain("timed out")
    expect(result.durationMs).toBeLessThan(2_000)
  })

  it("over https, names the URL's host in TLS (SNI) while connecting to the checked address, and verifies the certificate", async () => {
    const names: Array<string> = []
    const secure = https.createServer({
      ...selfSignedCert("receiver.example"),
      SNICallback: (name, callback) => {
        names.push(name)
        callback(null) // the server's own certificate
      }
    }, (_req, res) => res.writeHead(204).end())
    await new Promise<void>((r) => secure.listen(0, "127.0.0.1", () => r()))
    try {
      const tlsPort = (secure.address() as { port: number }).port
      const result = await postWebhook({ url: new URL(`https://receiver.example:${tlsPort}/in`), address: "127.0.0.1", body: "{}", headers: {} })
      // receiver.example resolves nowhere: the handshake reached 127.0.0.1, and its self-signed certificate is refused.
      expect(names).toEqual(["receiver.example"])
      expect(result).toMatchObject({ ok: false, httpCode: null })
      expect(result.error).toMatch(/self[- ]signed certificate/)
    } finally {
      secure.closeAllConnections()
      secure.close()
    }
  })
})
