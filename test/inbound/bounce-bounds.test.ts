/**
 * The bounce parser stays linear in the message's size on reports built to make it otherwise, so
 * a parse keeps well inside its worker's bounds (src/inbound/processor/Processor.ts: one minute,
 * 512 MB, for messages up to HERALD_SMTP_MAX_MESSAGE_MB). Each message here is a few megabytes;
 * a quadratic step turns any of them into minutes, or into a thrown stack overflow.
 */
import { describe, expect, it } from "vitest"
import { understandMessage } from "../../src/inbound/understand.ts"

/* Far above what these take (about a second each on a loaded machine), far below a quadratic run. */
const BOUND_MS = 15_000

const head = (extra = "") =>
  `Return-Path: <>\nFrom: MAILER-DAEMON@mx.example.net\nTo: bounce@herald.test\nSubject: Undelivered Mail Returned to Sender\n${extra}`

const times = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n")

const report = (text: string, dsn: string) =>
  head("MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\n") +
  `\n--b\nContent-Type: text/plain\n\n${text}\n--b\nContent-Type: message/delivery-status\n\n${dsn}\n--b--\n`

const CASES: Record<string, string> = {
  "80,000 addresses on failure lines": `${head()}\n${times(80_000, (i) => `There was an error delivering your mail to <u${i}@example.com>.`)}`,
  "300,000 addresses on few failure lines": `${head()}\n${times(5_000, (i) => `rejected ${times(60, (j) => `a${i}x${j}@e.com`).replace(/\n/g, " ")}`)}`,
  "100,000 lines opening with an address": `${head()}\n${times(100_000, (i) => `<u${i - (i % 2)}@example.com>: 550 5.1.1 unknown`)}`,
  "X-Failed-Recipients with 5,000 addresses": `${head(`X-Failed-Recipients: ${times(5_000, (i) => `f${i}@example.com`).replace(/\n/g, ", ")}\n`)}\n${times(50_000, (i) => `<u${i}@example.com>: 550 5.1.1 unknown`)}`,
  "30,000 DSN blocks without a mailbox": report(times(30_000, (i) => `<r${i}@example.com>`), times(30_000, () => "Final-Recipient: rfc822; @host\nAction: failed\nStatus: 5.0.0\n")),
  "30,000 DSN blocks with their codes in the text": report(
    times(30_000, (i) => `r${i}@example.com: 550 5.1.1 unknown`),
    times(30_000, (i) => `Final-Recipient: rfc822; r${i}@example.com\nAction: failed\nStatus: 5.0.0\n`)
  ),
  "40,000 quoted report headers": `${head()}\nThe mail could not be delivered.\n${times(40_000, () => "From: MAILER-DAEMON@x.example\nSubject: Undelivered Mail\n")}`,
  "a 3 MB To: in the returned original": `${head("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n")}\n--b\nContent-Type: text/plain\n\nYour message could not be delivered.\n--b\nContent-Type: message/rfc822\n\nTo: ${"a".repeat(3_000_000)}\nSubject: x\n\nbody\n--b--\n`
}

describe("bounce parse bounds", () => {
  it.each(Object.keys(CASES))("%s: parsed in linear time", async (name) => {
    const started = performance.now()
    const understood = await understandMessage(Buffer.from(CASES[name]!))
    expect(performance.now() - started).toBeLessThan(BOUND_MS)
    // A bounce reports on one message: a text bounce names at most 1000 recipients.
    if (understood.kind === "bounce" && !name.includes("DSN")) expect(understood.bounce.recipients.length).toBeLessThanOrEqual(1000)
  }, 60_000)
})
