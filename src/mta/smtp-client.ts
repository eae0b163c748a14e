/**
 * Hands a signed message to the next hop over SMTP (nodemailer's pooled transport, one pool per
 * host and port, so connections are reused up to the destination's messages-per-connection).
 * Opportunistic STARTTLS: upgraded when offered, certificates not required (RFC 7435 — an MX's
 * certificate rarely matches). MX hosts are tried in order while they cannot be reached; the first
 * SMTP reply decides the attempt.
 */
import nodemailer from "nodemailer"
import type { Reply } from "./classify.ts"

export interface Hop {
  readonly host: string
  readonly port: number
  /** The name the host is known by, for TLS SNI when `host` is an address. */
  readonly servername?: string | undefined
  /** Smarthost credentials and TLS mode (HERALD_SMARTHOST). */
  readonly auth?: { readonly user: string; readonly pass: string } | undefined
  readonly secure?: boolean | undefined
}

export interface Envelope {
  readonly from: string
  readonly to: string
}

type Transport = ReturnType<typeof nodemailer.createTransport>

export interface SmtpClientOptions {
  readonly heloName: string
  readonly maxConnections: number
  readonly messagesPerConnection: number
}

const errorReply = (error: unknown): Reply => {
  const e = error as { responseCode?: number; response?: string; message?: string; code?: string }
  if (typeof e.responseCode === "number") return { code: e.responseCode, text: e.response ?? e.message ?? "" }
  return { code: null, text: `${e.code ?? "ERROR"}: ${e.message ?? String(error)}` }
}

export class SmtpClient {
  private readonly pools = new Map<string, Transport>()

  private pool(hop: Hop, options: SmtpClientOptions): Transport {
    const key = `${hop.host}:${hop.port}`
    let transport = this.pools.get(key)
    if (transport === undefined) {
      transport = nodemailer.createTransport({
        host: hop.host,
        port: hop.port,
        secure: hop.secure ?? false,
        name: options.heloName,
        pool: true,
        maxConnections: options.maxConnections,
        maxMessages: options.messagesPerConnection,
        ...(hop.auth === undefined ? {} : { auth: { user: hop.auth.user, pass: hop.auth.pass } }),
        tls: { rejectUnauthorized: false, ...(hop.servername === undefined ? {} : { servername: hop.servername }) },
        connectionTimeout: 30_000,
        greetingTimeout: 30_000,
        socketTimeout: 120_000
      })
      this.pools.set(key, transport)
    }
    return transport
  }

  /** Tries each hop in order while it cannot be reached; returns the reply that decided. */
  async send(hops: ReadonlyArray<Hop>, envelope: Envelope, raw: Buffer, options: SmtpClientOptions): Promise<Reply & { host: string }> {
    let last: Reply & { host: string } = { code: null, text: "no host to deliver to", host: "" }
    for (const hop of hops) {
      try {
        const info = await this.pool(hop, options).sendMail({ envelope: { from: envelope.from, to: [envelope.to] }, raw })
        const response = String(info.response ?? "250 OK")
        return { code: Number(response.slice(0, 3)) || 250, text: response, host: hop.servername ?? hop.host }
      } catch (error) {
        last = { ...errorReply(error), host: hop.servername ?? hop.host }
        if (last.code !== null) return last
      }
    }
    return last
  }

  close(): void {
    for (const transport of this.pools.values()) transport.close()
    this.pools.clear()
  }
}
