/**
 * What an SMTP session's TLS was, for the attempt's record (delivery_attempts) and the TLS-RPT
 * report (RFC 8460): the protocol version, whether the certificate verified for the MX name, and
 * when it fell short, the RFC 8460 §4.3 result type that says how.
 */
import type { TLSSocket } from "node:tls"

export interface SessionTls {
  /** `TLSv1.3`, `TLSv1.2`…; null when the session stayed in plaintext. */
  readonly version: string | null
  /** The certificate chained to a trusted CA and named the host (false in plaintext). */
  readonly verified: boolean
  /** RFC 8460 result type when TLS was missing or its certificate did not verify; null when it did. */
  readonly failure: string | null
}

/** The RFC 8460 result type of a certificate error code of Node's TLS (OpenSSL's names). */
export const certificateFailure = (code: string | undefined | null): string => {
  switch (code) {
    case "ERR_TLS_CERT_ALTNAME_INVALID":
    case "HOSTNAME_MISMATCH":
      return "certificate-host-mismatch"
    case "CERT_HAS_EXPIRED":
    case "CERT_NOT_YET_VALID":
      return "certificate-expired"
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
    case "UNABLE_TO_GET_ISSUER_CERT":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "CERT_UNTRUSTED":
      return "certificate-not-trusted"
    default:
      return "validation-failure"
  }
}

/** The TLS of a session that was set up: `socket` is the connection's socket once EHLO is done. */
export const sessionTls = (secure: boolean, socket: unknown): SessionTls => {
  if (!secure || socket === null || typeof socket !== "object" || !("getProtocol" in socket)) {
    return { version: null, verified: false, failure: "starttls-not-supported" }
  }
  const tls = socket as TLSSocket
  const verified = tls.authorized
  const reason = tls.authorizationError as unknown
  return {
    version: tls.getProtocol(),
    verified,
    failure: verified ? null : certificateFailure(typeof reason === "string" ? reason : (reason as { code?: string } | undefined)?.code)
  }
}

/**
 * The TLS of a session that could not be set up because TLS was required (MTA-STS enforce):
 * no STARTTLS, a refused STARTTLS, or a certificate that did not verify. Null when the failure had
 * nothing to do with TLS (connection refused, timeout).
 */
export const failedSessionTls = (error: unknown): SessionTls | null => {
  const e = error as { code?: string; originalCode?: string; message?: string }
  const original = e.originalCode ?? ""
  if (/CERT|SIGNED|ALTNAME|ISSUER|HOSTNAME/.test(original)) return { version: null, verified: false, failure: certificateFailure(original) }
  if (e.code === "ETLS") return { version: null, verified: false, failure: "starttls-not-supported" }
  return null
}
