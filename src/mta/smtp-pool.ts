/**
 * The connections to one next hop (host and port): nodemailer's SMTP connection (the protocol,
 * STARTTLS, AUTH, dot-stuffing), pooled here rather than through nodemailer's pooled transport.
 * That transport wraps every message in a Mail object, runs it through its plugins and streams it
 * through a MIME node, which the MTA's ready-made, signed bytes do not need: measured against a
 * bare sink, a message cost 1.1 ms of CPU through the transport and 0.5 ms through the
 * connection alone.
 *
 * The pool keeps what the transport did: at most `maxConnections` connections, each closed after
 * `maxMessages` messages; a message refused by the server (envelope or data) leaves the
 * connection usable after RSET; any other failure closes it; a connection the server closed while
 * idle is dropped, and a message that found its reused connection dead before a byte was sent is
 * tried once more on a fresh one. Idle connections close themselves after the socket timeout.
 *
 * An urgent message (transactional mail) takes the first connection to be free: it goes to the
 * front of the line, and when a new connection may be opened while others are busy, it opens one
 * *and* waits in line, taking whichever comes first (the other goes to the next in line or idles).
 * Opening costs the server's greeting delay — 100 ms for smtp-server's early-talker check, seconds
 * behind Postfix's postscreen — while a busy connection frees up within one transaction: a
 * transactional send behind a bulk backlog on the same host would otherwise watch dozens of bulk
 * messages go out on the open connection before its own had said hello (test/mta/lanes.test.ts).
 */
import SMTPConnection from "nodemailer/lib/smtp-connection"
import { type SessionTls, sessionTls } from "./tls-session.ts"

export interface PoolOptions {
  readonly host: string
  readonly port: number
  readonly secure: boolean
  readonly heloName: string
  readonly auth: { readonly user: string; readonly pass: string } | undefined
  /** Credentials never travel in plaintext: STARTTLS is required before AUTH on smtp://. */
  readonly requireTLS: boolean
  readonly rejectUnauthorized: boolean
  readonly servername: string | undefined
  /** Trusted CA certificates (the system's plus HERALD_TLS_CA_FILE's); undefined: Node's defaults. */
  readonly ca?: ReadonlyArray<string> | undefined
  readonly maxConnections: number
  readonly maxMessages: number
}

export type SmtpError = SMTPConnection.SMTPError

interface Pooled {
  readonly connection: SMTPConnection
  sent: number
  dead: boolean
  /** The session's TLS, known once it is set up (recorded with each attempt made on it). */
  tls: SessionTls | undefined
}

/** The server's reply to a message, with the TLS of the session it went over. */
export type SentInfo = SMTPConnection.SentMessageInfo & { readonly tls: SessionTls | undefined }

/** One send waiting for a connection: handed one, or told (undefined) that one may be opened or the pool closed. */
interface Waiter {
  readonly wake: (pooled: Pooled | undefined) => void
  /** An urgent send already opening its own connection (firstFree): a free place is no news to it. */
  readonly opening: boolean
}

const closedError = () => Object.assign(new Error("SMTP client closed"), { code: "ECONNECTION" })

/** Failures that say nothing about the message: the connection was gone before it was sent. */
const CONNECTION_LOST = new Set(["ECONNECTION", "ESOCKET", "ETIMEDOUT"])

export class SmtpPool {
  private readonly idle: Array<Pooled> = []
  private readonly waiting: Array<Waiter> = []
  private open = 0
  private closed = false

  constructor(private readonly options: PoolOptions) {}

  /**
   * Sends `raw` to one recipient; resolves with the server's final reply or rejects with its
   * error. The connection's next transaction waits for `recorded` (settled or rejected): the
   * caller's outcome of this one is on record first, so a crash leaves at most one accepted
   * message per connection unrecorded (test/mta/crash-window.test.ts).
   */
  async send(from: string, to: string, raw: Buffer, urgent = false, recorded: Promise<unknown> = Promise.resolve()): Promise<SentInfo> {
    const pooled = await this.acquire(urgent)
    const reused = pooled.sent > 0
    try {
      const info = await this.transact(pooled, from, to, raw)
      this.releaseAfter(pooled, recorded)
      return { ...info, tls: pooled.tls }
    } catch (error) {
      const e = error as SmtpError
      if ((e.code === "EENVELOPE" || e.code === "EMESSAGE") && e.responseCode !== 421 && !pooled.dead) {
        pooled.connection.reset((resetError) => (resetError ? this.discard(pooled) : this.releaseAfter(pooled, recorded)))
      } else {
        this.discard(pooled)
        // A reused connection the server had closed meanwhile: the message never left, try a fresh one.
        if (reused && e.responseCode === undefined && CONNECTION_LOST.has(e.code ?? "")) return this.send(from, to, raw, urgent, recorded)
      }
      throw error
    }
  }

  close(): void {
    this.closed = true
    for (const pooled of this.idle.splice(0)) this.discard(pooled)
    for (const waiter of this.waiting.splice(0)) waiter.wake(undefined)
  }

  private transact(pooled: Pooled, from: string, to: string, raw: Buffer) {
    return new Promise<SMTPConnection.SentMessageInfo>((resolve, reject) => {
      pooled.sent += 1
      // The envelope object is the connection's to annotate: a fresh one per message.
      pooled.connection.send({ from, to: [to] }, raw, (error, info) => (error ? reject(error) : resolve(info)))
    })
  }

  private async acquire(urgent: boolean): Promise<Pooled> {
    for (;;) {
      if (this.closed) throw closedError()
      const idle = this.idle.pop()
      if (idle !== undefined) {
        if (!idle.dead) return idle
        continue
      }
      if (this.open < this.options.maxConnections) {
        if (urgent && this.open > 0) return this.firstFree()
        this.open += 1
        try {
          return await this.connect()
        } catch (error) {
          this.open -= 1
          this.handOn()
          throw error
        }
      }
      const handed = await new Promise<Pooled | undefined>((resolve) => {
        const waiter: Waiter = { wake: resolve, opening: false }
        if (urgent) this.waiting.unshift(waiter)
        else this.waiting.push(waiter)
      })
      if (handed !== undefined && !handed.dead) return handed
    }
  }

  /**
   * Opens a connection and waits at the front of the line at once: resolves with whichever is
   * first, the new connection or a busy one handed on (see the header). A new connection that
   * lost the race is offered like a released one; one that failed fails the wait only if nothing
   * was handed on meanwhile.
   */
  private firstFree(): Promise<Pooled> {
    this.open += 1
    return new Promise<Pooled>((resolve, reject) => {
      let settled = false
      const settle = () => {
        settled = true
        const i = this.waiting.indexOf(waiter)
        if (i >= 0) this.waiting.splice(i, 1)
      }
      const waiter: Waiter = {
        opening: true,
        wake: (handed) => {
          if (this.closed) {
            settle()
            return reject(closedError())
          }
          if (handed !== undefined && !handed.dead) {
            settle()
            return resolve(handed)
          }
          // A dead connection handed on: still waiting, at the front, for ours or the next one.
          this.waiting.unshift(waiter)
        }
      }
      this.waiting.unshift(waiter)
      this.connect().then(
        (fresh) => {
          if (settled) return this.offer(fresh)
          settle()
          resolve(fresh)
        },
        (error: unknown) => {
          this.open -= 1
          if (!settled) {
            settle()
            reject(error)
          }
          this.handOn()
        }
      )
    })
  }

  /**
   * A connection is handed on one event-loop turn after its reply (as nodemailer's pool does):
   * the connection finishes its own bookkeeping of the reply first.
   */
  private release(pooled: Pooled): void {
    setImmediate(() => this.offer(pooled))
  }

  /** Released once `recorded` settles, whichever way (the caller's outcome is written, or will never be). */
  private releaseAfter(pooled: Pooled, recorded: Promise<unknown>): void {
    const release = () => this.release(pooled)
    recorded.then(release, release)
  }

  /** A free connection goes to the first in line, or idles. */
  private offer(pooled: Pooled): void {
    if (pooled.dead || this.closed || pooled.sent >= this.options.maxMessages) return this.discard(pooled)
    const waiter = this.waiting.shift()
    if (waiter !== undefined) waiter.wake(pooled)
    else this.idle.push(pooled)
  }

  /** Closes a connection we no longer want (retired first, so its place is free at once). */
  private discard(pooled: Pooled): void {
    if (pooled.dead) return
    this.retire(pooled)
    pooled.connection.quit()
  }

  /**
   * A connection's place came free: the first waiter not already opening one may open it. (Told
   * to an urgent send that is opening its own, the news went round: two of them handed it to each
   * other until the stack overflowed, bench/campaign.ts at 5,000 concurrent sends.)
   */
  private handOn(): void {
    if (this.open >= this.options.maxConnections) return
    const i = this.waiting.findIndex((w) => !w.opening)
    if (i >= 0) this.waiting.splice(i, 1)[0]!.wake(undefined)
  }

  private connect(): Promise<Pooled> {
    const o = this.options
    const connection = new SMTPConnection({
      host: o.host,
      port: o.port,
      secure: o.secure,
      name: o.heloName,
      requireTLS: o.requireTLS,
      tls: {
        rejectUnauthorized: o.rejectUnauthorized,
        ...(o.servername === undefined ? {} : { servername: o.servername }),
        ...(o.ca === undefined ? {} : { ca: [...o.ca] })
      },
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 120_000
    })
    const pooled: Pooled = { connection, sent: 0, dead: false, tls: undefined }
    return new Promise<Pooled>((resolve, reject) => {
      let settled = false
      const fail = (error: unknown) => {
        if (settled) return
        settled = true
        pooled.dead = true
        connection.close()
        reject(error)
      }
      // Errors outside a transaction (the server hung up, a timeout while idle) retire the
      // connection; those inside one also reach the transaction's callback.
      connection.on("error", (error) => {
        if (!settled) return fail(error)
        this.retire(pooled)
      })
      connection.on("end", () => (settled ? this.retire(pooled) : fail(Object.assign(new Error("Connection closed"), { code: "ECONNECTION" }))))
      connection.connect((error) => {
        if (error) return fail(error)
        // The socket is the TLS one once STARTTLS is done (nodemailer keeps it as `_socket`).
        pooled.tls = sessionTls(connection.secure, (connection as unknown as { _socket?: unknown })._socket)
        if (o.auth === undefined) {
          settled = true
          return resolve(pooled)
        }
        connection.login({ user: o.auth.user, pass: o.auth.pass }, (loginError) => {
          if (loginError) return fail(loginError)
          settled = true
          resolve(pooled)
        })
      })
    })
  }

  /** The connection is gone (closed by the server, or failed): forget it without waiting for it. */
  private retire(pooled: Pooled): void {
    if (pooled.dead) return
    pooled.dead = true
    this.open -= 1
    const i = this.idle.indexOf(pooled)
    if (i >= 0) this.idle.splice(i, 1)
    this.handOn()
  }
}
