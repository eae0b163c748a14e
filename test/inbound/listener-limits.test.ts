/**
 * The MX listener's transport rules with a real client: STARTTLS when a certificate is configured
 * (the message then travels encrypted and is stored as usual), and the per-address connection
 * limit answered with 421 while the earlier connections stay open.
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
})
