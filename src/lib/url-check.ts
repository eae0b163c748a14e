/**
 * Where outbound HTTP made on someone else's behalf may go (webhook URLs, and the MTA-STS policy
 * fetch of a recipient domain, src/mta/mta-sts/fetch.ts): only to public addresses — never to loopback, private, link-local,
 * CGNAT, multicast or other reserved ranges, IPv4 or IPv6 (the rules, shared with the MTA, are in
 * src/lib/forbidden-address.ts). The check resolves the host once and the delivery connects to the
 * checked address, so a name that later resolves elsewhere (DNS rebinding) cannot slip through.
 * In production only https.
 */
import { isIP } from "node:net"
import { forbiddenAddress } from "./forbidden-address.ts"

export { embeddedV4, forbiddenAddress, ipv6Bytes } from "./forbidden-address.ts"

export interface UrlPolicy {
  readonly production: boolean
  readonly allowPrivate: boolean
}

export type CheckedUrl =
  | { readonly ok: true; readonly url: URL; readonly address: string }
  | { readonly ok: false; readonly reason: string }

/** The URL's host, still to be resolved before its check can answer. */
export interface HostToResolve {
  readonly url: URL
  readonly host: string
}

/**
 * The check as far as it goes without DNS: the answer for a URL that is malformed, not allowed
 * or names an IP address (no lookup, no promise: the dispatcher checks every attempt), or else
 * the host to resolve and finish with `checkAddresses`.
 */
export const checkWebhookUrlSync = (raw: string, policy: UrlPolicy): CheckedUrl | HostToResolve => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: "not a URL" }
  }
  if (url.protocol !== "https:" && (policy.production || url.protocol !== "http:")) {
    return { ok: false, reason: policy.production ? "only https URLs are delivered in production" : "must be an http(s) URL" }
  }
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials in the URL are not allowed" }
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (isIP(host) !== 0) return checkAddresses({ url, host }, [host], policy)
  // Loopback by definition (RFC 6761 §6.3), whatever a resolver would say: refused, or resolved by the system.
  if (isLocalhost(host) && !policy.allowPrivate) return { ok: false, reason: `${host} is loopback${hint(policy)}` }
  return { url, host }
}

export const isLocalhost = (host: string): boolean => {
  const name = host.toLowerCase().replace(/\.$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

/**
 * In development a receiver on the developer's own machine is the usual first webhook: the
 * refusal says how to allow it. Production cannot (HERALD_WEBHOOK_ALLOW_PRIVATE is ignored there).
 */
export const ALLOW_PRIVATE_HINT =
  "private and loopback receivers are refused; in development set HERALD_WEBHOOK_ALLOW_PRIVATE=true to allow them"
const hint = (policy: UrlPolicy) => policy.production ? "" : ` (${ALLOW_PRIVATE_HINT})`

/** Checks the addresses a host resolved to and picks the one to connect to (the first; all must be allowed). */
export const checkAddresses = (target: HostToResolve, addresses: ReadonlyArray<string>, policy: UrlPolicy): CheckedUrl => {
  if (addresses.length === 0) {
    // Names of /etc/hosts are looked up only for private receivers (WebhookSender.ts): say so in development.
    const hosts = policy.production || policy.allowPrivate
      ? ""
      : " (in development, HERALD_WEBHOOK_ALLOW_PRIVATE=true also looks names up in /etc/hosts)"
    return { ok: false, reason: `${target.host} does not resolve${hosts}` }
  }
  if (policy.allowPrivate) return { ok: true, url: target.url, address: addresses[0]! }
  for (const address of addresses) {
    const reason = forbiddenAddress(address)
    if (reason !== null) {
      return { ok: false, reason: `${target.host} → ${reason}${hint(policy)}` }
    }
  }
  return { ok: true, url: target.url, address: addresses[0]! }
}
