/**
 * Hands a signed message to the next hop over SMTP (a pool of nodemailer's SMTP connections per
 * host and port, ./smtp-pool.ts, so connections are reused up to the destination's
 * messages-per-connection).
 * Recipients' MX: opportunistic STARTTLS, upgraded when offered, certificates not required
 * (RFC 7435 — an MX's certificate rarely matches, and unauthenticated encryption beats plaintext),
 * except for a domain whose MTA-STS policy is `enforce` (src/mta/mta-sts/): STARTTLS required and
 * the certificate verified for the MX name, or no session at all.
 * The smarthost carries our credentials, so its certificate is verified (unless the operator opts
 * out for a self-signed relay) and, when credentials are set on an smtp:// URL, STARTTLS is
 * required: credentials never travel in plaintext. MX hosts are tried in order while they cannot
 * be reached; the first SMTP reply about the message decides the attempt. A session that could
 * not be set up (TLS or AUTH refused) says nothing about the recipient: it defers, never bounces.
 */
import type { Reply } from "./classify.ts"
import { SmtpPool } from "./smtp-pool.ts"
import { failedSessionTls, type SessionTls } from "./tls-session.ts"

export interface Hop {
  readonly host: string
  readonly port: number
  /** The name the host is known by, for TLS SNI when `host` is an address. */
  readonly servername?: string | undefined
  /** Smarthost credentials and TLS mode (HERALD_SMARTHOST). */
  readonly auth?: { readonly user: string; readonly pass: string } | undefined
  readonly secure?: boolean | undefined
  /** Verify the TLS certificate (the smarthost, an MTA-STS enforce MX; default off, for recipients' MX). */
  readonly verifyCertificate?: boolean | undefined
  /** STARTTLS required even without credentials (an MTA-STS enforce MX): never plaintext. */
  readonly requireTls?: boolean | undefined
  /** Trusted CA certificates for this hop (the system's plus HERALD_TLS_CA_FILE's). */
  readonly ca?: ReadonlyArray<string> | undefined
}

/** The reply that decided an attempt, the host that gave it and the TLS of its session (when one was set up or failed over TLS). */
export type SentReply = Reply & { readonly host: string; readonly tls?: SessionTls | undefined }

export interface Envelope {
  readonly from: string
  readonly to: string
}

export interface SmtpClientOptions {
  readonly heloName: string
  readonly maxConnections: number
  readonly messagesPerConnection: number
  /** Transactional mail: takes the first connection to come free (./smtp-pool.ts). */
  readonly urgent?: boolean | undefined
  /** Settles once the attempt's outcome is on record: the connection's next transaction waits for it (./smtp-pool.ts). */
  readonly recorded?: Promise<unknown> | undefined
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
  private readonly pools = new Map<string, SmtpPool>()

  private pool(hop: Hop, options: SmtpClientOptions): SmtpPool {
    // A required-TLS hop never shares a pool (nor its plaintext connections) with an opportunistic one.
    const key = `${hop.host}:${hop.port}${hop.requireTls === true ? `:tls:${hop.servername ?? ""}` : ""}`
    let pool = this.pools.get(key)
    if (pool === undefined) {
      pool = new SmtpPool({
        host: hop.host,
        port: hop.port,
        secure: hop.secure ?? false,
        heloName: options.heloName,
        auth: hop.auth,
        // Credentials over smtp:// only after STARTTLS: a relay that does not offer it is refused.
        requireTLS: (hop.auth !== undefined && hop.secure !== true) || hop.requireTls === true,
        rejectUnauthorized: hop.verifyCertificate ?? false,
        servername: hop.servername,
        ca: hop.ca,
        maxConnections: options.maxConnections,
        maxMessages: options.messagesPerConnection
      })
      this.pools.set(key, pool)
    }
    return pool
  }

  /** Tries each hop in order while it cannot be reached; returns the reply that decided. */
  async send(hops: ReadonlyArray<Hop>, envelope: Envelope, raw: Buffer, options: SmtpClientOptions): Promise<SentReply> {
    let last: SentReply = { code: null, text: "no host to deliver to", host: "" }
    for (const hop of hops) {
      try {
        const info = await this.pool(hop, options).send(envelope.from, envelope.to, raw, options.urgent === true, options.recorded)
        const response = String(info.response ?? "250 OK")
        return { code: Number(response.slice(0, 3)) || 250, text: response, host: hop.servername ?? hop.host, tls: info.tls }
      } catch (error) {
        last = { ...errorReply(error), host: hop.servername ?? hop.host, tls: failedSessionTls(error) ?? undefined }
        if (last.code !== null) return last
      }
    }
    return last
  }

  close(): void {
    for (const pool of this.pools.values()) pool.close()
    this.pools.clear()
  }
}
