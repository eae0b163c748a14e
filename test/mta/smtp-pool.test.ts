/**
 * The SMTP pool against a real sink (smtp-server greets 100 ms after the connection, its
 * early-talker check; here each DATA is answered 40 ms after its end). An urgent message
 * (transactional) takes the first connection to come free — the busy one, well before a new
 * connection has said hello — and the connection opened for it goes to the next in line; the
 * pool never holds more than its cap.
 */
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SmtpPool } from "../../src/mta/smtp-pool.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts"

let sink: SmtpSink
beforeAll(async () => {
  sink = await startSmtpSink({ delayMs: 40 })
})
afterAll(() => sink.close())

const poolTo = (port: number, maxConnections = 2) =>
  new SmtpPool({
    host: "127.0.0.1",
    port,
    secure: false,
    heloName: "pool.herald.test",
    auth: undefined,
    requireTLS: false,
    rejectUnauthorized: false,
    servername: undefined,
    maxConnections,
    maxMessages: 100
  })

const raw = (name: string) => Buffer.from(`Subject: ${name}\r\n\r\n${name}\r\n`)
/** The pool hands a connection on one event-loop turn after its reply. */
const idled = () => new Promise((resolve) => setImmediate(resolve))
const recipientsInOrder = (from: number) => sink.received.slice(from).map((m) => m.rcptTo[0])

describe("SmtpPool", () => {
  it("gives an urgent message the busy connection as it comes free, before a new one has greeted, and the new one to the next in line", async () => {
    const pool = poolTo(sink.port)
    try {
      await pool.send("a@pool.test", "warm@pool.test", raw("warm"))
      await idled()
      const before = sink.received.length
      const connectionsBefore = sink.connections.length
      // One bulk message on the open connection, then an urgent one, then ten more bulk ones.
      const bulk = pool.send("a@pool.test", "bulk0@pool.test", raw("bulk0"))
      const urgent = pool.send("a@pool.test", "urgent@pool.test", raw("urgent"), true)
      const rest = Array.from({ length: 10 }, (_, i) => pool.send("a@pool.test", `bulk${i + 1}@pool.test`, raw(`bulk${i + 1}`)))
      await Promise.all([bulk, urgent, ...rest])

      const order = recipientsInOrder(before)
      expect(order.slice(0, 2)).toEqual(["bulk0@pool.test", "urgent@pool.test"])
      expect(order).toHaveLength(12)
      // The connection opened for the urgent message was not wasted, and the cap held.
      expect(sink.connections.length - connectionsBefore).toBe(1)
      expect(sink.peakConnections()).toBeLessThanOrEqual(2)
    } finally {
      pool.close()
    }
  })

  it("an urgent message whose new connection is refused fails with the refusal, and the pool goes on with the one it has", async () => {
    // A server that takes one client at a time: a second connection is answered 421 at once.
    const server = new SMTPServer({ maxClients: 1, authOptional: true, disabledCommands: ["AUTH", "STARTTLS"], logger: false,
      onData(stream, _session, callback) {
        stream.resume()
        stream.on("end", () => setTimeout(() => callback(), 40))
      } })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.server.address()
    const pool = poolTo(typeof address === "object" && address !== null ? address.port : 0)
    try {
      await pool.send("a@pool.test", "warm@pool.test", raw("warm"))
      await idled()
      const bulk = pool.send("a@pool.test", "bulk@pool.test", raw("bulk"))
      await expect(pool.send("a@pool.test", "urgent@pool.test", raw("urgent"), true)).rejects.toMatchObject({ responseCode: 421 })
      await bulk
      // The refused connection gave its place back; the open one serves the next message.
      await expect(pool.send("a@pool.test", "next@pool.test", raw("next"), true)).resolves.toMatchObject({ accepted: ["next@pool.test"] })
    } finally {
      pool.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it("a connection lost while two urgent messages open theirs: its place goes to none of them, and every message gets its own answer", async () => {
    // The first connection greets at once, later ones after 400 ms; MAIL FROM of fail@ is answered 421 after 150 ms.
    let connected = 0
    const server = new SMTPServer({ authOptional: true, disabledCommands: ["AUTH", "STARTTLS"], logger: false,
      onConnect(_session, callback) {
        connected += 1
        setTimeout(() => callback(), connected === 1 ? 0 : 400)
      },
      onMailFrom(address, _session, callback) {
        if (address.address !== "fail@pool.test") return callback()
        setTimeout(() => callback(Object.assign(new Error("try again later"), { responseCode: 421 })), 150)
      },
      onData(stream, _session, callback) {
        stream.resume()
        stream.on("end", () => callback())
      } })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.server.address()
    const pool = poolTo(typeof address === "object" && address !== null ? address.port : 0, 3)
    try {
      await pool.send("a@pool.test", "warm@pool.test", raw("warm"))
      await idled()
      // The open connection is busy with a message it will lose; two urgent messages each open a connection meanwhile.
      const lost = pool.send("fail@pool.test", "lost@pool.test", raw("lost"))
      const urgent = [1, 2].map((n) => pool.send("a@pool.test", `urgent${n}@pool.test`, raw(`urgent${n}`), true))
      // Before the fix, the freed place went back and forth between the two urgent waiters until the stack overflowed.
      await expect(lost).rejects.toMatchObject({ responseCode: 421 })
      for (const sent of urgent) await expect(sent).resolves.toMatchObject({ accepted: [expect.stringMatching(/^urgent\d@pool\.test$/)] })
      await expect(pool.send("a@pool.test", "after@pool.test", raw("after"))).resolves.toMatchObject({ accepted: ["after@pool.test"] })
    } finally {
      pool.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it("starts no transaction on a connection until the previous one's outcome is recorded", async () => {
    const pool = poolTo(sink.port, 1)
    try {
      const before = sink.received.length
      let record = () => {}
      const recorded = new Promise<void>((resolve) => (record = resolve))
      await pool.send("a@pool.test", "first@pool.test", raw("first"), false, recorded)
      // The only connection stays with the first message's outcome: the second waits, unsent.
      const second = pool.send("a@pool.test", "second@pool.test", raw("second"))
      await new Promise((r) => setTimeout(r, 300))
      expect(recipientsInOrder(before)).toEqual(["first@pool.test"])
      record()
      await second
      expect(recipientsInOrder(before)).toEqual(["first@pool.test", "second@pool.test"])
    } finally {
      pool.close()
    }
  })
})
