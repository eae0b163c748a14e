/**
 * SMTP submission's connection caps and its RCPT bound: HERALD_SMTP_MAX_CONNECTIONS_PER_IP
 * sessions per client address (421 at the greeting; another address is served; a closed session
 * frees its place), 20 authenticated sessions per account across its keys (421 at AUTH; another
 * account is served), and at most 1,000 RCPT in a transaction whatever HERALD_MAX_RECIPIENTS says
 * (452 4.5.3; the message goes to the first 1,000).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { newSender, type SendingApp, startSendingApp } from "../support/sending.ts"
import { authPlain, openDialog, type SmtpDialog } from "../support/smtp-dialog.ts"

const PER_IP = 25
/** MAX_SESSIONS_PER_ACCOUNT in session.ts. */
const PER_ACCOUNT = 20

let rig: SendingApp

beforeAll(async () => {
  rig = await startSendingApp({ HERALD_SMTP_MAX_CONNECTIONS_PER_IP: String(PER_IP), HERALD_MAX_RECIPIENTS: "5000" })
}, 120_000)
afterAll(() => rig.stop())

const open = (localAddress: string) => openDialog(rig.app.submissionPort, { localAddress })

const closeAll = async (dialogs: ReadonlyArray<SmtpDialog>) => {
  for (const dialog of dialogs) dialog.destroy()
  await Promise.all(dialogs.map((d) => d.closed))
}

/** Opens sessions from `localAddress` until one is greeted with 220 (a closed one's place is freed just after its close), at most 5 s. */
const greetedAgain = async (localAddress: string) => {
  const until = Date.now() + 5_000
  for (;;) {
    const dialog = await open(localAddress)
    if (dialog.greeting.startsWith("220") || Date.now() > until) return dialog
    dialog.destroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("SMTP submission's connection caps", () => {
  it(`greets at most ${PER_IP} sessions from one address (421 beyond), serves another address meanwhile, and frees a place when a session closes`, async () => {
    const held = await Promise.all(Array.from({ length: PER_IP }, () => open("127.0.0.3")))
    try {
      expect(held.map((d) => d.greeting.slice(0, 3))).toEqual(held.map(() => "220"))
      const over = await open("127.0.0.3")
      expect(over.greeting).toMatch(/^421 4\.7\.0 Too many connections from your address/)
      await over.closed
      const elsewhere = await open("127.0.0.4")
      expect(elsewhere.greeting).toMatch(/^220 /)
      elsewhere.destroy()
      held.shift()!.destroy()
      const again = await greetedAgain("127.0.0.3")
      expect(again.greeting).toMatch(/^220 /)
      held.push(again)
    } finally {
      await closeAll(held)
    }
  }, 60_000)

  it(`authenticates at most ${PER_ACCOUNT} sessions of one account (421 beyond), and another account's meanwhile`, async () => {
    const sessions: Array<SmtpDialog> = []
    try {
      for (let i = 0; i < PER_ACCOUNT; i++) {
        const dialog = await open("127.0.0.1")
        sessions.push(dialog)
        expect(await dialog.command("EHLO app.test")).toMatch(/^250[- ]/)
        expect(await dialog.command(authPlain(rig.sender.token))).toMatch(/^235 /)
      }
      const over = await open("127.0.0.1")
      sessions.push(over)
      expect(await over.command("EHLO app.test")).toMatch(/^250[- ]/)
      expect(await over.command(authPlain(rig.sender.token))).toMatch(/^421 4\.7\.0 Too many connections for this account/)
      const other = await newSender(rig.app, rig.dns)
      const theirs = await open("127.0.0.1")
      sessions.push(theirs)
      expect(await theirs.command("EHLO app.test")).toMatch(/^250[- ]/)
      expect(await theirs.command(authPlain(other.token))).toMatch(/^235 /)
    } finally {
      await closeAll(sessions)
    }
  }, 60_000)
})

describe("SMTP submission's RCPT bound", () => {
  it("takes at most 1,000 RCPT in a transaction though HERALD_MAX_RECIPIENTS is 5,000 (452 4.5.3), and delivers to those 1,000", async () => {
    const dialog = await open("127.0.0.1")
    try {
      expect(await dialog.command("EHLO app.test")).toMatch(/^250[- ]/)
      expect(await dialog.command(authPlain(rig.sender.token))).toMatch(/^235 /)
      expect(await dialog.command(`MAIL FROM:<${rig.sender.from}>`)).toMatch(/^250 /)
      for (let i = 0; i < 1000; i++) {
        const reply = await dialog.command(`RCPT TO:<r${i}@many.example>`)
        if (!reply.startsWith("250")) expect.fail(`RCPT ${i + 1}: ${reply}`)
      }
      expect(await dialog.command("RCPT TO:<r1000@many.example>")).toBe("452 4.5.3 Too many recipients: one message may have at most 1000")
      expect(await dialog.command("DATA")).toMatch(/^354 /)
      const accepted = await dialog.command(`From: <${rig.sender.from}>\r\nSubject: many\r\n\r\nHello all\r\n.`)
      expect(accepted).toMatch(/^250 2\.0\.0 queued as msg_/)
      const id = /queued as (\S+)/.exec(accepted)![1]
      const rows = await query<{ n: number }>(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE message_id = $1", [id])
      expect(rows[0]!.n).toBe(1000)
    } finally {
      dialog.destroy()
    }
  }, 120_000)
})
