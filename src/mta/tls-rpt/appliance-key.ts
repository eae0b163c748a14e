/**
 * The appliance's own DKIM key, which signs its TLS-RPT report mail (RFC 8460 §5.3: the report
 * mail must be DKIM-signed by the submitter). Made once by the first replica that needs it and
 * shared through appliance_settings; its DNS record (`herald tlsrpt dkim-record`, docs) goes under
 * the reports' From domain with the selector `tlsrpt`.
 */
import { createPublicKey } from "node:crypto"
import { Effect } from "effect"
import { applianceValue } from "../../platform/appliance-secrets.ts"
import { generateDkimKeyPair } from "../../platform/domains/dkim-keys.ts"
import { prepareKey } from "../dkim.ts"

export const TLSRPT_DKIM_SELECTOR = "tlsrpt"
const SETTING = "tlsrpt_dkim_private_key"

/** The key's PEM (PKCS#8), made if no replica has made it yet. */
export const tlsRptKeyPem = applianceValue(SETTING, Effect.map(generateDkimKeyPair, (pair) => pair.privateKey))

/** The signing key for mail from `fromDomain`. */
export const tlsRptSigningKey = (fromDomain: string) =>
  Effect.map(tlsRptKeyPem, (pem) => prepareKey(fromDomain, TLSRPT_DKIM_SELECTOR, pem))

/** The TXT record receivers look the key up at. */
export const tlsRptDkimRecord = (fromDomain: string, pem: string) => ({
  type: "TXT" as const,
  name: `${TLSRPT_DKIM_SELECTOR}._domainkey.${fromDomain}`,
  value: `v=DKIM1; k=rsa; p=${createPublicKey(pem).export({ type: "spki", format: "der" }).toString("base64")}`
})

/** HERALD_TLSRPT_FROM, else tlsrpt@<HERALD_BOUNCE_DOMAIN>. */
export const tlsRptFrom = (configured: string | undefined, bounceDomain: string) => configured ?? `tlsrpt@${bounceDomain}`
