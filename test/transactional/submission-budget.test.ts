/**
 * Submitted message bytes count in the account's part of the body budget (HERALD_HTTP_BODY_BUDGET_MB,
 * shared with the HTTP API's bodies) from DATA's first byte until the transaction ends. Before,
 * they counted nowhere: an account could hold any number of MAX_JSON_MB messages in memory by
 * opening connections and never ending their DATA. Now, past its part, its next message is
 * answered 452 4.3.1 while another account's submission and HTTP send go on and `/health` stays
 * quick; the room comes back when a message's connection goes (abort) and when its reply is sent
 * (end). The DATA timeout's path is in submission-timeouts.test.ts.
 *
 * Sizes: MAX_JSON_MB 1, a budget of 4 MB, an account's share 50 % (2 MB), a key all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectResponsive, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { newSender, type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"
import { authPlain, openDialog, type SmtpDialog } from "../support/smtp-dialog.ts"
import { submitRaw } from "../support/submission.ts"

const KB = 1024

let rig: SendingApp
let attacker: Sender
let other: Sender

beforeAll(async () => {
  rig = await startSendingApp({
    MAX_JSON_MB: "1",
    HERALD_HTTP_BODY_BUDGET_MB: "4",
    HERALD_HTTP_BODY_ACCOUNT_SHARE_PERCENT: "50",
    HERALD_HTTP_BODY_KEY_SHARE_PERCENT: "100"
  })
  attacker = rig.sender
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
}, 120_000)
afterAll(() => rig.stop())

/** A message from `sender` of about `kb` KB (76-character lines: nothing to dot-stuff). */
const message = (sender: Sender, kb: number) =>
  `From: <${sender.from}>\r\nTo: someone@example.org\r\nSubject: big\r\n\r\n` + `${"x".repeat(76)}\r\n`.repeat(Math.ceil((kb * KB) / 78))

/** A session of `sender` that sends `kb` KB of a message and stops there, its DATA not ended. */
const holdOpen = async (sender: Sender, kb: number): Promise<SmtpDialog> => {
  const dialog = await openDialog(rig.app.submissionPort)
  expect(await dialog.command("EHLO app.test")).toMatch(/^250[- ]/)
  expect(await dialog.command(authPlain(sender.token))).toMatch(/^235 /)
  expect(await dialog.command(`MAIL FROM:<${sender.from}>`)).toMatch(/^250 /)
  expect(await dialog.command("RCPT TO:<someone@example.org>")).toMatch(/^250 /)
  expect(await dialog.command("DATA")).toMatch(/^354 /)
  dialog.write(message(sender, kb))
  return dialog
}

const submit = (sender: Sender, kb: number) =>
  submitRaw({ port: rig.app.submissionPort, token: sender.token, envelope: { from: sender.from, to: ["someone@example.org"] }, raw: message(sender, kb) })

/** Submits until the answer is `code` (the held bytes reach the listener meanwhile), at most 10 s. */
const submitUntil = async (sender: Sender, kb: number, code: number) => {
  const until = Date.now() + 10_000
  for (;;) {
    const reply = await submit(sender, kb)
    if (reply.code === code || Date.now() > until) return reply
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("SMTP submission's message bytes in the body budget", () => {
  it("refuses an account past its part with 452 4.3.1 while another account submits and sends; gives the room back on abort and at the end of a transaction", async () => {
    // 2 × 1000 KB held of the account's 2048 KB.
    const first = await holdOpen(attacker, 1000)
    const second = await holdOpen(attacker, 1000)
    try {
      const refused = await submitUntil(attacker, 200, 452)
      expect(refused.code, refused.text).toBe(452)
      expect(refused.text).toContain("4.3.1 Too many message bytes of this account are being received at once")

      // Another account: its own part, its submission and its HTTP send answered as ever.
      // Its message over 64 KB, so that it takes room of its own part; /health asked for 2 s while the attack holds.
      const { result, health } = await probeHealthWhile(rig.app, () => submit(other, 100), {
        minMs: 2_000,
        bystander: { sender: other, to: "bystander@example.org", afterMs: 100 }
      })
      console.log(`another account's submission: ${result.code}; ${formatHealth(health)}`)
      expect(result.code, result.text).toBe(250)
      expectResponsive(health)

      // Abort: the first connection goes mid-message, and its 1000 KB with it.
      first.destroy()
      await first.closed
      const afterAbort = await submitUntil(attacker, 200, 250)
      expect(afterAbort.code, afterAbort.text).toBe(250)

      // End: the second message ends, is accepted, and gives its room back with its reply.
      second.write(".\r\n")
      expect(await second.reply()).toMatch(/^250 2\.0\.0 queued as /)
      // Were its 1000 KB still held, two more messages of 1000 KB could not both be taken.
      const third = await holdOpen(attacker, 1000)
      const fourth = await holdOpen(attacker, 1000)
      third.write(".\r\n")
      fourth.write(".\r\n")
      expect(await third.reply()).toMatch(/^250 /)
      expect(await fourth.reply()).toMatch(/^250 /)
      third.destroy()
      fourth.destroy()
    } finally {
      first.destroy()
      second.destroy()
    }
  }, 120_000)
})
