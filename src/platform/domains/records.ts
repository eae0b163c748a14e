/**
 * The DNS records a customer publishes for a sending domain (pure: the same inputs always give
 * the same records, so the API and the verifier agree on names and values).
 */
import type { DnsRecord } from "./Api.ts"

export interface DomainKeys {
  readonly domain: string
  readonly verificationToken: string
  readonly dkimSelector: string
  readonly dkimPublicKey: string
}

export interface ApplianceNames {
  /** HERALD_HOSTNAME: the MX target and the SPF include. */
  readonly hostname: string
  /** HERALD_BOUNCE_DOMAIN: where DMARC aggregate reports are received. */
  readonly bounceDomain: string
}

/** The return-path subdomain whose MX points at the appliance (SPF alignment for DMARC). */
export const RETURN_PATH_LABEL = "herald-bounces"

export const returnPathDomain = (domain: string) => `${RETURN_PATH_LABEL}.${domain}`

export const verificationValue = (token: string) => `herald-verification=${token}`

export const spfValue = (names: ApplianceNames) => `v=spf1 include:${names.hostname} ~all`

export const domainRecords = (keys: DomainKeys, names: ApplianceNames): ReadonlyArray<DnsRecord> => [
  { purpose: "verification", type: "TXT", name: keys.domain, value: verificationValue(keys.verificationToken) },
  {
    purpose: "dkim",
    type: "TXT",
    name: `${keys.dkimSelector}._domainkey.${keys.domain}`,
    value: `v=DKIM1; k=rsa; p=${keys.dkimPublicKey}`
  },
  { purpose: "spf", type: "TXT", name: keys.domain, value: spfValue(names) },
  {
    purpose: "dmarc",
    type: "TXT",
    name: `_dmarc.${keys.domain}`,
    value: `v=DMARC1; p=none; rua=mailto:dmarc@${names.bounceDomain}`
  },
  { purpose: "return_path", type: "MX", name: returnPathDomain(keys.domain), value: `10 ${names.hostname}` },
  { purpose: "return_path", type: "TXT", name: returnPathDomain(keys.domain), value: spfValue(names) }
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
