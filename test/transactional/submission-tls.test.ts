/**
 * SMTP submission with a certificate (HERALD_SMTP_TLS_CERT / KEY, signed by a test CA for
 * `localhost`), from a client address that is not loopback (one of this host's own, such as
 * 192.0.2.2 here: the listener on HERALD_SMTP_HOST=0.0.0.0 sees the connection come from it; on a
 * host with none, 127.0.0.2, which the listener does not count as loopback): STARTTLS is offered and
 * verifies against the CA, AUTH in clear text before it is refused with 538 5.7.11, and after it a
 * message is accepted; on HERALD_SUBMISSION_TLS_PORT the session is TLS from the first byte
 * (STARTTLS not offered again) and AUTH works at once.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../support/net.ts"
import { type SendingApp, startSendingApp } from "../support/sending.ts"
import { authPlain, openDialog, type SmtpDialog } from "../support/smtp-dialog.ts"
import { makeTestCa } from "../support/test-ca.ts"

/** An address of this host that is not loopback, if it has one (the test says so when it has none). */
const outside = Object.values(os.networkInterfaces()).flat().find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address
const client = outside === undefined ? { host: "127.0.0.1", localAddress: "127.0.0.2" } : { host: outside, localAddress: outside }

let rig: SendingApp
let ca: string
let tlsPort: number

beforeAll(async () => {
  const testCa = makeTestCa()
  const leaf = testCa.issue(["localhost"])
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-submission-tls-"))
  fs.writeFileSync(path.join(dir, "cert.pem"), leaf.cert)
  fs.writeFileSync(path.join(dir, "key.pem"), leaf.key)
  ca = testCa.caCert
  tlsPort = await freePort()
  rig = await startSendingApp({
    HERALD_SMTP_TLS_CERT: path.join(dir, "cert.pem"),
    HERALD_SMTP_TLS_KEY: path.join(dir, "key.pem"),
    HERALD_SUBMISSION_TLS_PORT: String(tlsPort),
    HERALD_SMTP_HOST: "0.0.0.0"
  })
}, 120_000)
afterAll(() => rig.stop())

/** EHLO's capabilities (the reply's lines after the first, without their codes). */
const ehlo = async (dialog: SmtpDialog) => {
  const reply = await dialog.command("EHLO app.test")
  expect(reply).toMatch(/^250[- ]/)
  return reply.split("\n").slice(1).map((line) => line.slice(4))
}

/** MAIL, RCPT and a small message on an authenticated dialog: the final reply. */
const sendSmall = async (dialog: SmtpDialog) => {
  expect(await dialog.command(`MAIL FROM:<${rig.sender.from}>`)).toMatch(/^250 /)
  expect(await dialog.command("RCPT TO:<someone@example.org>")).toMatch(/^250 /)
  expect(await dialog.command("DATA")).toMatch(/^354 /)
  return dialog.command(`From: <${rig.sender.from}>\r\nTo: someone@example.org\r\nSubject: over TLS\r\n\r\nHello\r\n.`)
}

describe(`SMTP submission with a certificate, from ${client.localAddress}`, () => {
  it("refuses AUTH in clear text with 538 5.7.11, offers STARTTLS with the configured certificate and accepts AUTH and a message after it", async () => {
    const dialog = await openDialog(rig.app.submissionPort, client)
    expect(dialog.greeting).toMatch(/^220 /)
    expect(await ehlo(dialog)).toContain("STARTTLS")
    expect(await dialog.command(authPlain(rig.sender.token))).toMatch(/^538 5\.7\.11 /)
    expect(await dialog.command("STARTTLS")).toMatch(/^220 /)
    // Verified against the test CA for "localhost": the configured certificate, not smtp-server's built-in one.
    const secure = await dialog.startTls(ca)
    expect(await ehlo(secure)).not.toContain("STARTTLS")
    expect(await secure.command(authPlain(rig.sender.token))).toMatch(/^235 /)
    expect(await sendSmall(secure)).toMatch(/^250 2\.0\.0 queued as msg_/)
    secure.destroy()
  })

  it("speaks TLS from the first byte on HERALD_SUBMISSION_TLS_PORT and accepts AUTH there", async () => {
    const dialog = await openDialog(tlsPort, { ...client, tls: { ca } })
    expect(dialog.greeting).toMatch(/^220 /)
    expect(await ehlo(dialog)).not.toContain("STARTTLS")
    // Already TLS: STARTTLS again is not a command of this session.
    expect(await dialog.command("STARTTLS")).toMatch(/^5\d\d /)
    expect(await dialog.command(authPlain(rig.sender.token))).toMatch(/^235 /)
    expect(await sendSmall(dialog)).toMatch(/^250 2\.0\.0 queued as msg_/)
    dialog.destroy()
  })
})
