/**
 * A real SMTP server on loopback that records what it receives: the MX of every recipient domain
 * in delivery tests. Replies can be chosen per recipient (550 5.1.1, 451 4.3.0, 421 4.7.0, …); it
 * counts current and peak connections so connection limits can be checked. Optionally it listens
 * on another loopback address or a chosen port, offers STARTTLS with a given certificate, and
 * requires AUTH with given credentials (a smarthost), recording every AUTH attempt.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SMTPServer } from "smtp-server"

export interface Received {
  readonly mailFrom: string
  readonly rcptTo: ReadonlyArray<string>
  readonly raw: Buffer
  readonly receivedAt: number
  /** Whether the session had been upgraded with STARTTLS. */
  readonly secure: boolean
  /** The authenticated user, if the client logged in. */
  readonly user: string | undefined
  /** The address the client connected to (which of several sinks on one port). */
  readonly localAddress: string
}

export interface AuthAttempt {
  readonly user: string
  /** Whether the credentials came over TLS. */
  readonly secure: boolean
  readonly accepted: boolean
}

export interface SinkOptions {
  /** Delay before answering the end of DATA. */
  readonly delayMs?: number
  /** Listen address (default 127.0.0.1): another loopback address can share the port of a first sink. */
  readonly host?: string
  /** Listen port (default: any free one). */
  readonly port?: number
  /** PEM key and certificate: the sink offers STARTTLS (otherwise it does not). */
  readonly tls?: { readonly key: string; readonly cert: string }
  /** Credentials the sink requires before MAIL (otherwise AUTH is not offered). */
  readonly auth?: { readonly user: string; readonly pass: string }
}

/** A self-signed certificate for `commonName` (openssl, in a temporary directory). */
export const selfSignedCert = (commonName = "sink.herald.test"): { key: string; cert: string } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-sink-tls-"))
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${commonName}`,
      "-addext", `subjectAltName=DNS:${commonName},IP:127.0.0.1`,
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")
    ], { stdio: "ignore" })
    return { key: fs.readFileSync(path.join(dir, "key.pem"), "utf8"), cert: fs.readFileSync(path.join(dir, "cert.pem"), "utf8") }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export interface SmtpSink {
  readonly port: number
  readonly received: Array<Received>
  /** Recipient (lower case) → "550 5.1.1 User unknown" style reply at RCPT time. */
  readonly replies: Map<string, string>
  /** Every AUTH attempt, in order (only with the `auth` option). */
  readonly authAttempts: Array<AuthAttempt>
  /** Every connection the sink accepted, with its time (attempts that got no further count too). */
  readonly connections: Array<number>
  /** Every RCPT TO the sink was given (whatever it answered), with its time. */
  readonly rcpts: Array<{ readonly address: string; readonly at: number }>
  readonly peakConnections: () => number
  /**
   * SMTP transactions that may have been in flight at some moment between `from` and `to` (ms):
   * one per session that had begun its first MAIL by `to` and was not closed before `from`. A
   * session holds at most one transaction at a time, and counted so it is also one whose 250 was
   * given and whose next MAIL has not come — the upper bound of messages a client killed in that
   * span can have had accepted without knowing it (when it records each outcome before its next
   * MAIL on the session).
   */
  readonly transactionsInFlight: (from: number, to: number) => number
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

const replyError = (line: string) => {
  const code = Number(line.slice(0, 3))
  return Object.assign(new Error(line.slice(4)), { responseCode: code })
}

export const startSmtpSink = async (options: SinkOptions = {}): Promise<SmtpSink> => {
  const received: Array<Received> = []
  const replies = new Map<string, string>()
  const authAttempts: Array<AuthAttempt> = []
  const connections: Array<number> = []
  const rcpts: Array<{ address: string; at: number }> = []
  let open = 0
  let peak = 0
  // Per session id: when its first MAIL came and when it closed (transactionsInFlight).
  const sessions = new Map<string, { firstMail: number; closed: number | undefined }>()
  const auth = options.auth
  const server = new SMTPServer({
    authOptional: auth === undefined,
    disabledCommands: [...(auth === undefined ? ["AUTH"] : []), ...(options.tls === undefined ? ["STARTTLS"] : [])],
    ...(options.tls === undefined ? {} : { key: options.tls.key, cert: options.tls.cert }),
    logger: false,
    size: 50 * 1024 * 1024,
    onAuth(attempt, session, callback) {
      const accepted = auth !== undefined && attempt.username === auth.user && attempt.password === auth.pass
      authAttempts.push({ user: attempt.username ?? "", secure: session.secure, accepted })
      if (accepted) callback(null, { user: attempt.username })
      else callback(Object.assign(new Error("5.7.8 Authentication credentials invalid"), { responseCode: 535 }))
    },
    onConnect(_session, callback) {
      connections.push(Date.now())
      open += 1
      peak = Math.max(peak, open)
      callback()
    },
    onClose(session) {
      open -= 1
      const s = sessions.get(session.id)
      if (s !== undefined) s.closed = Date.now()
    },
    onMailFrom(_address, session, callback) {
      if (!sessions.has(session.id)) sessions.set(session.id, { firstMail: Date.now(), closed: undefined })
      callback()
    },
    onRcptTo(address, _session, callback) {
      rcpts.push({ address: address.address.toLowerCase(), at: Date.now() })
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
            receivedAt: Date.now(),
            secure: session.secure,
            user: typeof session.user === "string" ? session.user : undefined,
            localAddress: session.localAddress
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
  // A chosen address and port may be taken: fail the start instead of waiting forever.
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.server.off("error", reject)
      resolve()
    })
  })
  const address = server.server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    received,
    replies,
    authAttempts,
    connections,
    rcpts,
    peakConnections: () => peak,
    transactionsInFlight: (from, to) =>
      [...sessions.values()].filter((s) => s.firstMail <= to && (s.closed === undefined || s.closed >= from)).length,
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
