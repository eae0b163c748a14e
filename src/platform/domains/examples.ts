/** The reference's errors and examples for the sending domains (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { DomainsGroup } from "./Api.ts"

const NOT_FOUND = "404 `not_found` when `{domain}` is not registered for this account."
const VERIFY = `${NOT_FOUND} 400 \`validation_failed\` (param \`domain\`) when the verification TXT record is not found; 503 `
  + "`dns_lookup_failed` when the DNS lookup fails (try again later)."

const records = [
  { purpose: "verification", type: "TXT", name: "_herald.example.org", value: "herald-verification=6Hs8Kd2Lf5Jg9Qw1", optional: false },
  { purpose: "dkim", type: "TXT", name: "herald._domainkey.example.org", value: "v=DKIM1; k=rsa; p=MIIBIjANBgkqh…", optional: false },
  { purpose: "spf", type: "TXT", name: "example.org", value: "v=spf1 a:herald.example.net ~all", optional: true },
  { purpose: "dmarc", type: "TXT", name: "_dmarc.example.org", value: "v=DMARC1; p=none; rua=mailto:dmarc@herald.example.net", optional: true }
]
const domain = {
  domain: "example.org",
  verified: true,
  verified_at: "2026-11-02T10:20:00.000Z",
  verified_by: "dns",
  return_path_verified: false,
  records,
  created_at: "2026-11-02T10:15:00.000Z"
}
const verification = {
  domain: "example.org",
  verified: true,
  verified_at: "2026-11-02T10:20:00.000Z",
  records: records.map((r) => ({ ...r, status: r.purpose === "spf" ? "missing" : "verified", found: r.purpose === "spf" ? [] : [r.value] })),
  ready: true
}

export const domainsReference: GroupReference<typeof DomainsGroup> = {
  create: {
    errors: "409 `domain_exists` when the domain is registered already.",
    request: { domain: "example.org" },
    response: { ...domain, verified: false, verified_at: null, verified_by: null }
  },
  list: { errors: "No errors of its own.", response: { items: [domain] } },
  get: { errors: NOT_FOUND, response: domain },
  remove: { errors: NOT_FOUND, response: { domain: "example.org", deleted: true } },
  verify: { errors: VERIFY, response: verification },
  verifyLegacy: { errors: VERIFY, response: verification }
}
