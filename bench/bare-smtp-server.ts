/**
 * The inbound benchmark's baseline: a bare smtp-server with the MX listener's options (no AUTH or
 * STARTTLS, the same size limit, timeouts and client limit) that takes recipients on one domain
 * (a set lookup, 550 otherwise), reads DATA, discards it and answers 250 — no database, no parse.
 * Run by bench/inbound.ts with PORT, DOMAIN and MAX_BYTES.
 */
import { SMTPServer } from "smtp-server"

const domain = (process.env["DOMAIN"] ?? "").toLowerCase()
const reply = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code })

const server = new SMTPServer({
  name: "bare.bench",
  banner: "Bare ESMTP",
  size: Number(process.env["MAX_BYTES"] ?? 25 * 1024 * 1024),
  maxClients: 200,
  authOptional: true,
  disabledCommands: ["AUTH", "STARTTLS"],
  socketTimeout: 60_000,
  closeTimeout: 5_000,
  logger: false,
  onRcptTo(address, _session, callback) {
    const at = address.address.lastIndexOf("@")
    const ok = address.address.slice(at + 1).toLowerCase() === domain
    callback(ok ? undefined : reply(550, "5.7.1 Relaying denied"))
  },
  onData(stream, _session, callback) {
    stream.on("data", () => undefined)
    stream.once("error", (error) => callback(error))
    stream.once("end", () => {
      if (stream.sizeExceeded) return callback(reply(552, "5.3.4 Message too big"))
      callback(null, "2.0.0 Ok: discarded")
    })
  }
})
server.on("error", (error) => console.error("bare smtp server:", error.message))
server.listen(Number(process.env["PORT"]), "127.0.0.1")
process.once("SIGTERM", () => server.close(() => process.exit(0)))
