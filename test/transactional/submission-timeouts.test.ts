/**
 * SMTP submission's timeouts, shortened through the environment: a silent client is closed after
 * HERALD_SUBMISSION_IDLE_TIMEOUT_SECONDS (421); a client trickling a command a byte at a time —
 * which the idle timeout, restarted by every byte, never caught — after
 * HERALD_SUBMISSION_COMMAND_TIMEOUT_SECONDS (421 4.4.2); a message trickled in whole lines after
 * HERALD_SUBMISSION_DATA_TIMEOUT_SECONDS, nothing of it sent, and its room in the account's body
 * budget given back (submission-budget.test.ts has the other paths).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"
import { authPlain, openDialog, type SmtpDialog } from "../support/smtp-dialog.ts"
import { submitRaw } from "../support/submission.ts"
import { sleep } from "../support/net.ts"

const KB = 1024
const IDLE_S = 2
const COMMAND_S = 1
const DATA_S = 4

let rig: SendingApp
let sender: Sender

beforeAll(async () => {
  rig = await startSendingApp({
    HERALD_SUBMISSION_IDLE_TIMEOUT_SECONDS: String(IDLE_S),
    HERALD_SUBMISSION_COMMAND_TIMEOUT_SECONDS: String(COMMAND_S),
    HERALD_SUBMISSION_DATA_TIMEOUT_SECONDS: String(DATA_S),
    // The budget test's sizes: an account holds at most 2 MB of messages at once.
    MAX_JSON_MB: "1",
    HERALD_HTTP_BODY_BUDGET_MB: "4",
    HERALD_HTTP_BODY_ACCOUNT_SHARE_PERCENT: "50",
    HERALD_HTTP_BODY_KEY_SHARE_PERCENT: "100"
  })
  sender = rig.sender
}, 120_000)
afterAll(() => rig.stop())


/** Seconds from now until `dialog`'s connection is closed by the server (at most `limitS`). */
const secondsUntilClosed = async (dialog: SmtpDialog, started: number, limitS: number) => {
  await Promise.race([dialog.closed, sleep(limitS * 1000)])
  return (Date.now() - started) / 1000
}

/** Writes `piece()` every `ms` until the connection closes. */
const trickle = (dialog: SmtpDialog, ms: number, piece: () => string) => {
  let open = true
  void dialog.closed.then(() => (open = false))
  const timer = setInterval(() => (open ? dialog.write(piece()) : clearInterval(timer)), ms)
  return () => clearInterval(timer)
}

const message = (kb: number) =>
  `From: <${sender.from}>\r\nTo: someone@example.org\r\nSubject: big\r\n\r\n` + `${"x".repeat(76)}\r\n`.repeat(Math.ceil((kb * KB) / 78))

/** An authenticated session of `sender` in its DATA. */
const inData = async (recipient: string) => {
  const dialog = await openDialog(rig.app.submissionPort)
  expect(await dialog.command("EHLO app.test")).toMatch(/^250[- ]/)
  expect(await dialog.command(authPlain(sender.token))).toMatch(/^235 /)
  expect(await dialog.command(`MAIL FROM:<${sender.from}>`)).toMatch(/^250 /)
  expect(await dialog.command(`RCPT TO:<${recipient}>`)).toMatch(/^250 /)
  expect(await dialog.command("DATA")).toMatch(/^354 /)
  return dialog
}

describe("SMTP submission's timeouts", () => {
  it("closes a silent session after the idle timeout with 421", async () => {
    const dialog = await openDialog(rig.app.submissionPort)
    const started = Date.now()
    const reply = dialog.reply()
    const seconds = await secondsUntilClosed(dialog, started, IDLE_S + 10)
    expect(await reply).toMatch(/^421 /)
    expect(seconds).toBeGreaterThanOrEqual(IDLE_S - 0.2)
    expect(seconds).toBeLessThan(IDLE_S + 5)
  }, 30_000)

  it("closes a session whose command trickles in a byte at a time after the command timeout with 421 4.4.2, though bytes keep coming", async () => {
    const dialog = await openDialog(rig.app.submissionPort)
    const started = Date.now()
    const reply = dialog.reply()
    // A byte every 300 ms: the idle timeout (2 s) never passes; the line is never whole.
    const stop = trickle(dialog, 300, () => "N")
    const seconds = await secondsUntilClosed(dialog, started, 20)
    stop()
    expect(await reply).toMatch(/^421 4\.4\.2 Command timeout/)
    expect(seconds).toBeLessThan(COMMAND_S + 3)
  }, 30_000)

  it("closes a session whose message trickles in whole lines after the DATA timeout, sends nothing of it, and gives its room in the body budget back", async () => {
    const recipient = "trickled@example.org"
    const dialog = await inData(recipient)
    const started = Date.now()
    // 1000 KB of the account's 2048 KB, then a line every 300 ms: neither idle nor command timeout passes.
    dialog.write(message(1000))
    const stop = trickle(dialog, 300, () => "more of it\r\n")
    const seconds = await secondsUntilClosed(dialog, started, 30)
    stop()
    expect(seconds).toBeGreaterThanOrEqual(DATA_S - 0.2)
    expect(seconds).toBeLessThan(DATA_S + 5)
    expect(await query(rig.app.databaseUrl, "SELECT 1 FROM deliveries WHERE recipient = $1", [recipient])).toHaveLength(0)
    // Its 1000 KB are back: another 1000 KB held, and a third 1000 KB message still fits (it would not beside a leaked one).
    const holding = await inData("held@example.org")
    holding.write(message(1000))
    const reply = await submitRaw({ port: rig.app.submissionPort, token: sender.token, envelope: { from: sender.from, to: ["after@example.org"] }, raw: message(1000) })
    holding.write(".\r\n")
    expect(reply.code, reply.text).toBe(250)
    // The held message was still open when the third was answered (else its room was free anyway).
    expect(await holding.reply()).toMatch(/^250 /)
    holding.destroy()
  }, 60_000)
})
