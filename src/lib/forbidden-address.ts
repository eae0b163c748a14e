/**
 * Addresses that outbound connections made on someone else's behalf must never reach: loopback,
 * private, link-local (169.254/16, cloud metadata), CGNAT, multicast and other reserved ranges,
 * IPv4 or IPv6 — an IPv6 address that stands for an IPv4 one (mapped, translated, NAT64, 6to4)
 * follows that address's rules; IPv4-compatible ::/96, local-use NAT64 64:ff9b:1::/48 and
 * site-local fec0::/10 are refused outright. Used by webhook URLs and MTA-STS policy hosts (src/lib/url-check.ts) and by
 * the MTA's MX hosts in production (src/mta/mx.ts).
 */
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
  ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ["64:ff9b:1::", 48], // local-use NAT64 (RFC 8215): translates into a private network
  ["100::", 64], ["2001::", 23], ["2001:db8::", 32], ["fc00::", 7], ["fe80::", 10],
  ["fec0::", 10], // site-local (deprecated, still routed inside some networks)
  ["ff00::", 8]
] as const) blocked.addSubnet(net, prefix, "ipv6")

/** The sixteen bytes of an IPv6 address (any notation, a trailing dotted quad included), or null. */
export const ipv6Bytes = (ip: string): Uint8Array | null => {
  if (isIP(ip) !== 6) return null
  let text = ip
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.includes("::") ? text.split("::") as [string, string] : [text, undefined]
  const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)))
  const left = groups(head)
  const right = groups(tail)
  const all = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
  if (all.length !== 8) return null
  const bytes = new Uint8Array(16)
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8
    bytes[2 * i + 1] = g & 255
  })
  return bytes
}

const v4At = (b: Uint8Array, i: number) => `${b[i]}.${b[i + 1]}.${b[i + 2]}.${b[i + 3]}`
const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0)

/**
 * The IPv4 address an IPv6 address stands for, whose rules it follows: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), well-known NAT64 (64:ff9b::a.b.c.d —
 * a NAT64 of a private address reaches that private address) and 6to4 (2002:aabb:ccdd::/48).
 */
export const embeddedV4 = (ip: string): string | null => {
  const b = ipv6Bytes(ip)
  if (b === null) return null
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4At(b, 12)
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12)) return v4At(b, 12)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return v4At(b, 12)
  if (b[0] === 0x20 && b[1] === 0x02) return v4At(b, 2)
  return null
}

/** Why an address may not be connected to on a customer's behalf, or null when it may. */
export const forbiddenAddress = (ip: string): string | null => {
  const family = isIP(ip)
  if (family === 0) return `${ip} is not an IP address`
  if (family === 6) {
    if (ip.includes("%")) return `${ip} is a scoped (link-local) address`
    const v4 = embeddedV4(ip)
    if (v4 !== null) {
      const inner = forbiddenAddress(v4)
      return inner === null ? null : `${ip} embeds ${inner}`
    }
    return blocked.check(ip, "ipv6") ? `${ip} is a private or reserved address` : null
  }
  return blocked.check(ip, "ipv4") ? `${ip} is a private or reserved address` : null
}
