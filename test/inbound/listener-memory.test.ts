/**
 * The MX listener's memory with real SMTP clients: a large message is written to PostgreSQL in
 * chunks while it is still arriving (not held whole until its end), arrives intact byte for byte
 * — dot-stuffed lines included — and leaves no staged chunk behind; with an inbound byte budget
 * far smaller than the messages, concurrent large messages wait for room and all get through
 * intact. The budget's own rule (never more reserved than it holds; a wait that finds no room
 * ends in a refusal) is checked directly. Process memory under 20 concurrent 24 MB messages is
 * measured by `bench/inbound-memory.ts`, not here.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ByteBudget } from "../../src/inbound/listener/ByteBudget.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { sendRaw } from "../support/smtp-client.ts"

const TO = "postmaster@bounces.herald.test"
let app: Appliance

beforeAll(async () => {
  app = await startAppliance({ env: { HERALD_SMTP_INBOUND_BUDGET_MB: "1", HERALD_INBOUND_ENABLED: "false" } })
})
afterAll(async () => {
  await app.stop()
})

/** A message of about `lines` × 90 bytes; every seventh line starts with a dot (stuffed on the wire). */
const bigMessage = (tag: string, lines: number) => {
  const body: Array<string> = []
  for (let j = 0; j < lines; j++) body.push(`${j % 7 === 0 ? "." : ""}${tag}-${j}-${"abcdefghij".repeat(7)}`)
  return `Subject: big ${tag}\r\nMessage-ID: <${tag}@remote.test>\r\n\r\n${body.join("\r\n")}\r\n`
}

/** A bare SMTP client that can stop in the middle of DATA. */
const openSession = async (port: number) => {
  const socket = net.connect(port, "127.0.0.1")
  let buffer = ""
  const waiting: Array<(line: string) => void> = []
  socket.on("data", (chunk) => {
    buffer += chunk.toString("latin1")
    let at: number
    while ((at = buffer.indexOf("\r\n")) >= 0) {
      const line = buffer.slice(0, at)
      buffer = buffer.slice(at + 2)
      // Multi-line replies (EHLO) end with "code SP"; only that line answers.
      if (/^\d{3} /.test(line)) waiting.shift()?.(line)
    }
  })
  const reply = () => new Promise<string>((resolve) => waiting.push(resolve))
  const command = (line: string) => {
    const answer = reply()
    socket.write(`${line}\r\n`)
    return answer
  }
  expect(await reply()).toMatch(/^220 /)
  expect(await command("EHLO remote.test")).toMatch(/^250 /)
  const write = (data: string) => new Promise<void>((resolve) => socket.write(data, "latin1", () => resolve()))
  return { socket, reply, command, write }
}

const dotStuffed = (raw: string) => raw.replace(/^\./gm, "..")

describe("the MX listener's memory", () => {
  it("writes a large message to PostgreSQL while it is still arriving, and stores it intact", async () => {
    const raw = bigMessage("streamed", 36_000) // ~3.2 MB
    const wire = dotStuffed(raw)
    const session = await openSession(app.smtpPort)
    try {
      expect(await session.command("MAIL FROM:<sender@remote.test>")).toMatch(/^250 /)
      expect(await session.command(`RCPT TO:<${TO}>`)).toMatch(/^250 /)
      expect(await session.command("DATA")).toMatch(/^354 /)
      const half = wire.lastIndexOf("\r\n", Math.floor(wire.length * 0.6)) + 2
      await session.write(wire.slice(0, half))
      // Before the message has ended, most of what was sent is already in the database.
      const staged = await eventually(async () => {
        const [row] = await query<{ bytes: string }>(app.databaseUrl, "SELECT coalesce(sum(length(data)), 0) AS bytes FROM inbound_chunks")
        return Number(row!.bytes) >= 1024 * 1024 ? Number(row!.bytes) : undefined
      }, "chunks staged before the end of DATA", 10_000)
      expect(staged).toBeGreaterThanOrEqual(1024 * 1024)
      const done = session.reply()
      await session.write(`${wire.slice(half)}.\r\n`)
      const answer = await done
      expect(answer).toMatch(/^250 /)
      const id = /queued as (\S+)/.exec(answer)![1]
      const [row] = await query<{ raw: Buffer; size: number }>(app.databaseUrl, "SELECT raw, size FROM inbound_messages WHERE id = $1", [id])
      expect(row!.size).toBe(Buffer.byteLength(raw))
      expect(row!.raw.equals(Buffer.from(raw, "latin1"))).toBe(true)
      expect(await query(app.databaseUrl, "SELECT 1 FROM inbound_chunks")).toHaveLength(0)
    } finally {
      session.socket.destroy()
    }
  }, 60_000)

  it("keeps nothing of a transfer whose sender hangs up mid-DATA", async () => {
    const session = await openSession(app.smtpPort)
    expect(await session.command("MAIL FROM:<sender@remote.test>")).toMatch(/^250 /)
    expect(await session.command(`RCPT TO:<${TO}>`)).toMatch(/^250 /)
    expect(await session.command("DATA")).toMatch(/^354 /)
    await session.write(dotStuffed(bigMessage("abandoned", 12_000)))
    await eventually(async () => ((await query(app.databaseUrl, "SELECT 1 FROM inbound_chunks")).length > 0 ? true : undefined), "staged chunks", 10_000)
    session.socket.destroy()
    await eventually(async () => ((await query(app.databaseUrl, "SELECT 1 FROM inbound_chunks")).length === 0 ? true : undefined),
      "the abandoned transfer's chunks dropped", 10_000)
    expect(await query(app.databaseUrl, "SELECT 1 FROM inbound_messages WHERE raw::text LIKE '%abandoned%'")).toHaveLength(0)
  }, 60_000)

  it("lets six concurrent 3 MB messages through a 1 MB budget, each intact", async () => {
    const messages = Array.from({ length: 6 }, (_, i) => bigMessage(`concurrent${i}`, 34_000))
    const replies = await Promise.all(messages.map((raw) => sendRaw(app.smtpPort, { from: "sender@remote.test", to: [TO] }, raw)))
    expect(replies.map((r) => r.code)).toEqual([250, 250, 250, 250, 250, 250])
    for (let i = 0; i < messages.length; i++) {
      const id = /queued as (\S+)/.exec(replies[i]!.text)![1]
      const [row] = await query<{ raw: Buffer }>(app.databaseUrl, "SELECT raw FROM inbound_messages WHERE id = $1", [id])
      expect(row!.raw.equals(Buffer.from(messages[i]!, "latin1"))).toBe(true)
    }
  }, 120_000)
})

describe("the inbound byte budget", () => {
  it("never reserves more than it holds, serves waiters in order, and refuses one that finds no room in time", async () => {
    const budget = new ByteBudget(100)
    let inUse = 0
    let highest = 0
    const hold = async (bytes: number, ms: number) => {
      if (!(await budget.acquire(bytes, 5_000))) return false
      inUse += bytes
      highest = Math.max(highest, inUse)
      await new Promise((r) => setTimeout(r, ms))
      inUse -= bytes
      budget.release(budget.charge(bytes))
      return true
    }
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => hold(30 + (i % 4) * 10, 5 + (i % 3) * 5)))
    expect(results.every(Boolean)).toBe(true)
    expect(highest).toBeLessThanOrEqual(100)
    expect(budget.peak).toBeLessThanOrEqual(100)
    expect(budget.inUse).toBe(0)

    expect(budget.tryAcquire(80)).toBe(true)
    const started = Date.now()
    expect(await budget.acquire(40, 50)).toBe(false) // no room within its wait
    expect(Date.now() - started).toBeGreaterThanOrEqual(45)
    const later = budget.acquire(40, 5_000)
    budget.release(80)
    expect(await later).toBe(true)
    // A piece larger than the whole budget passes alone, charged as the whole budget.
    expect(budget.charge(500)).toBe(100)
    budget.release(40)
    expect(await budget.acquire(500, 100)).toBe(true)
    expect(budget.inUse).toBe(100)
  })
})
