/**
 * A real SMTP server on loopback that records what it receives: the MX of every recipient domain
 * in delivery tests. Replies can be chosen per recipient (550 5.1.1, 451 4.3.0, …); it counts
 * current and peak connections so connection limits can be checked.
 */
import { SMTPServer } from "smtp-server"

export interface Received {
  readonly mailFrom: string
  readonly rcptTo: ReadonlyArray<string>
  readonly raw: Buffer
  readonly receivedAt: number
}

export interface SmtpSink {
  readonly port: number
  readonly received: Array<Received>
  /** Recipient (lower case) → "550 5.1.1 User unknown" style reply at RCPT time. */
  readonly replies: Map<string, string>
  readonly peakConnections: () => number
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

const replyError = (line: string) => {
  const code = Number(line.slice(0, 3))
  return Object.assign(new Error(line.slice(4)), { responseCode: code })
}

export const startSmtpSink = async (options: { readonly delayMs?: number } = {}): Promise<SmtpSink> => {
  const received: Array<Received> = []
  const replies = new Map<string, string>()
  let open = 0
  let peak = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    size: 50 * 1024 * 1024,
    onConnect(_session, callback) {
      open += 1
      peak = Math.max(peak, open)
      callback()
    },
    onClose() {
      open -= 1
    },
    onRcptTo(address, _session, callback) {
      const reply = replies.get(address.address.toLowerCase())
      callback(reply === undefined ? undefined : replyError(reply))
    },
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
        const finish = () => {
          received.push({
            mailFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks),
            receivedAt: Date.now()
          })
          callback()
        }
        if (options.delayMs) setTimeout(finish, options.delayMs)
        else finish()
      })
    }
  })
  // A client that vanishes mid-session (a SIGKILLed appliance) is normal here, not an error.
  server.on("error", () => undefined)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    received,
    replies,
    peakConnections: () => peak,
    waitFor: async (count, timeoutMs = 30_000) => {
      const end = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > end) throw new Error(`the sink has ${received.length} of ${count} messages after ${timeoutMs} ms`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
