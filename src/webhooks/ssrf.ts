/**
 * Where webhooks may go: never to loopback, private, link-local (169.254/16, cloud metadata),
 * CGNAT, multicast or other reserved ranges, IPv4 or IPv6 (with embedded IPv4 checked too). The
 * check resolves the host once and the delivery connects to the checked address, so a name that
 * later resolves elsewhere (DNS rebinding) cannot slip through. In production only https.
 */
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
  ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["2001:db8::", 32], ["100::", 64], ["2001::", 23]
] as const) blocked.addSubnet(net, prefix, "ipv6")

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
const embeddedV4 = (ip: string): string | null => {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (m) return m[1]!
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip)
  if (!hex) return null
  const a = parseInt(hex[1]!, 16)
  const b = parseInt(hex[2]!, 16)
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`
}

/** Why an address may not receive webhooks, or null when it may. */
export const forbiddenAddress = (ip: string): string | null => {
  const family = isIP(ip)
  if (family === 0) return `${ip} is not an IP address`
  if (family === 6) {
    const v4 = embeddedV4(ip)
    if (v4 !== null) return forbiddenAddress(v4)
    return blocked.check(ip, "ipv6") ? `${ip} is a private or reserved address` : null
  }
  return blocked.check(ip, "ipv4") ? `${ip} is a private or reserved address` : null
}

export interface UrlPolicy {
  readonly production: boolean
  readonly allowPrivate: boolean
}

export type CheckedUrl =
  | { readonly ok: true; readonly url: URL; readonly address: string }
  | { readonly ok: false; readonly reason: string }

/** Checks a webhook URL and picks the address to connect to (the first allowed one). */
export const checkWebhookUrl = async (
  raw: string,
  policy: UrlPolicy,
  lookup: (host: string) => Promise<ReadonlyArray<string>>
): Promise<CheckedUrl> => {
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
  const addresses = isIP(host) !== 0 ? [host] : await lookup(host).catch(() => [] as ReadonlyArray<string>)
  if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` }
  if (policy.allowPrivate) return { ok: true, url, address: addresses[0]! }
  for (const address of addresses) {
    const reason = forbiddenAddress(address)
    if (reason !== null) return { ok: false, reason: `${host} → ${reason}` }
  }
  return { ok: true, url, address: addresses[0]! }
}
