/**
 * Hands a signed message to the next hop over SMTP (nodemailer's pooled transport, one pool per
 * host and port, so connections are reused up to the destination's messages-per-connection).
 * Recipients' MX: opportunistic STARTTLS, upgraded when offered, certificates not required
 * (RFC 7435 — an MX's certificate rarely matches, and unauthenticated encryption beats plaintext).
 * The smarthost carries our credentials, so its certificate is verified (unless the operator opts
 * out for a self-signed relay) and, when credentials are set on an smtp:// URL, STARTTLS is
 * required: credentials never travel in plaintext. MX hosts are tried in order while they cannot
 * be reached; the first SMTP reply about the message decides the attempt. A session that could
 * not be set up (TLS or AUTH refused) says nothing about the recipient: it defers, never bounces.
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
  /** Verify the TLS certificate (the smarthost; default off, for recipients' MX). */
  readonly verifyCertificate?: boolean | undefined
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

/** Failures of the session itself (TLS, AUTH): whatever the server answered, not about the recipient. */
const SESSION_ERRORS = new Set(["ETLS", "EAUTH"])

const errorReply = (error: unknown): Reply => {
  const e = error as { responseCode?: number; response?: string; message?: string; code?: string }
  if (typeof e.responseCode === "number" && !SESSION_ERRORS.has(e.code ?? "")) {
    return { code: e.responseCode, text: e.response ?? e.message ?? "" }
  }
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
        // Credentials over smtp:// only after STARTTLS: a relay that does not offer it is refused.
        requireTLS: hop.auth !== undefined && hop.secure !== true,
        tls: {
          rejectUnauthorized: hop.verifyCertificate ?? false,
          ...(hop.servername === undefined ? {} : { servername: hop.servername })
        },
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
