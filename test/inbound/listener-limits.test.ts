/**
 * The MX listener's transport rules with a real client: STARTTLS when a certificate is configured
 * (the message then travels encrypted and is stored as usual), the per-address connection limit
 * answered with 421 while the earlier connections stay open, and the per-address message rate
 * answered with 451 at MAIL FROM.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import nodemailer from "nodemailer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { sendRaw } from "../support/smtp-client.ts"

let app: Appliance
let dir: string

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-tls-"))
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=herald.test",
    "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")
  ], { stdio: "ignore" })
  app = await startAppliance({
    env: {
      HERALD_SMTP_TLS_CERT: path.join(dir, "cert.pem"),
      HERALD_SMTP_TLS_KEY: path.join(dir, "key.pem"),
      HERALD_SMTP_MAX_CONNECTIONS_PER_IP: "2",
      HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: "3",
      HERALD_INBOUND_ENABLED: "false"
    }
  })
})
afterAll(async () => {
  await app.stop()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Opens a connection and resolves with the greeting line. */
const greeting = (socket: net.Socket) =>
  new Promise<string>((resolve) => socket.once("data", (chunk) => resolve(chunk.toString())))

describe("MX listener transport", () => {
  it("offers STARTTLS with the configured certificate and stores what arrives over it", async () => {
    const transport = nodemailer.createTransport({
      host: "127.0.0.1",
      port: app.smtpPort,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false, servername: "herald.test" }
    })
    // requireTLS: the client refuses to send unless STARTTLS was offered and succeeded.
    const info = await transport.sendMail({
      envelope: { from: "", to: ["postmaster@bounces.herald.test"] },
      raw: "Subject: over TLS\r\n\r\nencrypted\r\n"
    })
    transport.close()
    expect(String(info.response)).toMatch(/^250 /)
    const rows = await query<{ raw: Buffer }>(app.databaseUrl, "SELECT raw FROM inbound_messages")
    expect(rows.map((r) => r.raw.toString())).toContain("Subject: over TLS\r\n\r\nencrypted\r\n")
  })

  it("answers 421 to a third connection from one address while two are open", async () => {
    const sockets = [0, 1, 2].map(() => net.connect(app.smtpPort, "127.0.0.1"))
    try {
      const first = await greeting(sockets[0]!)
      const second = await greeting(sockets[1]!)
      const third = await greeting(sockets[2]!)
      expect(first).toMatch(/^220 /)
      expect(second).toMatch(/^220 /)
      expect(third).toMatch(/^421 /)
    } finally {
      for (const s of sockets) s.destroy()
    }
  })

  it("answers 451 to a fourth message within a minute from one address, and still takes another address's", async () => {
    const to = ["postmaster@bounces.herald.test"]
    const from = (n: number) => sendRaw(app.smtpPort, { from: "", to }, `Subject: flood ${n}\r\n\r\nagain\r\n`, "127.0.0.2")
    const replies = [await from(1), await from(2), await from(3), await from(4)]
    expect(replies.map((r) => r.code)).toEqual([250, 250, 250, 451])
    expect(replies[3]!.text).toContain("4.7.1")
    const stored = await query<{ raw: Buffer }>(app.databaseUrl, "SELECT raw FROM inbound_messages WHERE remote_address = '127.0.0.2'")
    expect(stored).toHaveLength(3)
    const other = await sendRaw(app.smtpPort, { from: "", to }, "Subject: calm\r\n\r\nonce\r\n", "127.0.0.3")
    expect(other.code).toBe(250)
  })
})
