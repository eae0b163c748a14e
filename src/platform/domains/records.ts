/**
 * The DNS records a customer publishes for a sending domain (pure: the same inputs always give
 * the same records, so the API and the verifier agree on names and values).
 *
 * No SPF record at the domain's apex: the envelope sender is never the apex (it is the return-path
 * subdomain, or HERALD_BOUNCE_DOMAIN until that is published), and a second `v=spf1` record there
 * would break SPF for whatever else the domain sends. The return-path subdomain gets its own SPF.
 * The DMARC record is a suggestion (`optional`): its `rua` is on the return-path subdomain, which
 * shares the organizational domain, so no external authorization record (RFC 7489 §7.1) is needed.
 */
import type { DnsRecord } from "./Api.ts"

export interface DomainKeys {
  readonly domain: string
  readonly verificationToken: string
  readonly dkimSelector: string
  readonly dkimPublicKey: string
}

export interface ApplianceNames {
  /** HERALD_HOSTNAME: the return-path MX target, and the SPF `a:` mechanism without public IPs. */
  readonly hostname: string
  /** HERALD_PUBLIC_IPS: the addresses mail leaves from (SPF `ip4:`/`ip6:`), when known. */
  readonly publicIps: ReadonlyArray<string>
  /** HERALD_SMARTHOST is set: mail leaves from the relay, not from this host. */
  readonly smarthost: boolean
  /** HERALD_SMARTHOST_SPF_INCLUDE: the relay's SPF domain, to `include:`. */
  readonly smarthostSpfInclude: string | undefined
}

/** The return-path subdomain whose MX points at the appliance (SPF alignment for DMARC). */
export const RETURN_PATH_LABEL = "herald-bounces"

export const returnPathDomain = (domain: string) => `${RETURN_PATH_LABEL}.${domain}`

export const verificationValue = (token: string) => `herald-verification=${token}`

const ipMechanism = (ip: string) => (ip.includes(":") ? `ip6:${ip}` : `ip4:${ip}`)

/**
 * The return-path subdomain's SPF: the hosts mail leaves from, and `-all`. Through a smarthost
 * they are the relay's: its SPF include when configured, else nothing this side knows of, so the
 * record only soft-fails (`~all`, warned about at start-up) and DMARC rests on DKIM.
 */
export const returnPathSpfValue = (names: ApplianceNames) => {
  if (names.smarthost) {
    return names.smarthostSpfInclude === undefined ? "v=spf1 ~all" : `v=spf1 include:${names.smarthostSpfInclude} -all`
  }
  const mechanisms = names.publicIps.length > 0 ? names.publicIps.map(ipMechanism) : [`a:${names.hostname}`]
  return `v=spf1 ${mechanisms.join(" ")} -all`
}

/** Where DMARC aggregate reports go: the MX listener takes mail for a verified return-path subdomain. */
export const dmarcReportAddress = (domain: string) => `dmarc@${returnPathDomain(domain)}`

export const domainRecords = (keys: DomainKeys, names: ApplianceNames): ReadonlyArray<DnsRecord> => [
  {
    purpose: "verification",
    type: "TXT",
    name: keys.domain,
    value: verificationValue(keys.verificationToken),
    optional: false
  },
  {
    purpose: "dkim",
    type: "TXT",
    name: `${keys.dkimSelector}._domainkey.${keys.domain}`,
    value: `v=DKIM1; k=rsa; p=${keys.dkimPublicKey}`,
    optional: false
  },
  { purpose: "return_path", type: "MX", name: returnPathDomain(keys.domain), value: `10 ${names.hostname}`, optional: false },
  { purpose: "spf", type: "TXT", name: returnPathDomain(keys.domain), value: returnPathSpfValue(names), optional: false },
  {
    purpose: "dmarc",
    type: "TXT",
    name: `_dmarc.${keys.domain}`,
    value: `v=DMARC1; p=none; rua=mailto:${dmarcReportAddress(keys.domain)}`,
    optional: true
  }
]

/**
 * Whether a verified domain may send at `now`: a domain whose TXT record disappeared keeps sending
 * for `graceHours` after the re-check that noticed (so a DNS migration does not stop mail at once).
 */
export const sendingAllowed = (
  domain: { readonly verifiedAt: Date | null; readonly verificationLostAt: Date | null },
  now: Date,
  graceHours: number
): "ok" | "unverified" | "grace_expired" => {
  if (domain.verifiedAt === null) return "unverified"
  if (domain.verificationLostAt === null) return "ok"
  return now.getTime() < domain.verificationLostAt.getTime() + graceHours * 3_600_000 ? "ok" : "grace_expired"
}
