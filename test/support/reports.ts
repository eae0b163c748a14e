/**
 * Inbound reports as remote systems send them, built around a message Herald really delivered:
 * an RFC 3464 DSN returning its headers, an RFC 5965 ARF complaint enclosing them, and a zipped
 * RFC 7489 aggregate report.
 */
import { generateKeyPairSync } from "node:crypto"
import { zipSync } from "fflate"
import { prepareKey, signMessage } from "../../src/mta/dkim.ts"
import type { DnsServer } from "./dns-server.ts"

/** The header block of a delivered message (what a DSN or ARF report encloses). */
export const headersOf = (raw: Buffer) => {
  const text = raw.toString("utf8")
  return text.slice(0, text.search(/\r?\n\r?\n/))
}

export const dsn = (
  to: string,
  recipient: string,
  status: string,
  originalHeaders: string,
  action = "failed",
  from = "MAILER-DAEMON@mx.rcpt.test"
) =>
  [
    `From: Mail Delivery System <${from}>`,
    `To: ${to}`,
    "Subject: Undelivered Mail Returned to Sender",
    "Message-ID: <dsn-1@mx.rcpt.test>",
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"',
    "",
    "--dsn-boundary",
    "Content-Type: text/plain",
    "",
    `<${recipient}>: host mx.rcpt.test said: ${status.startsWith("5") ? "550" : "452"} ${status} mailbox problem`,
    "",
    "--dsn-boundary",
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.rcpt.test",
    "",
    `Final-Recipient: rfc822; ${recipient}`,
    `Action: ${action}`,
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${status.startsWith("5") ? "550" : "452"} ${status} <${recipient}>: mailbox problem`,
    "",
    "--dsn-boundary",
    "Content-Type: text/rfc822-headers",
    "",
    originalHeaders,
    "",
    "--dsn-boundary--",
    ""
  ].join("\r\n")

export const arf = (to: string, recipient: string, originalHeaders: string, from = "feedback@fbl.isp.test") =>
  [
    `From: Feedback Loop <${from}>`,
    `To: ${to}`,
    "Subject: Complaint about message",
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=feedback-report; boundary="arf-boundary"',
    "",
    "--arf-boundary",
    "Content-Type: text/plain",
    "",
    "This is an email abuse report.",
    "",
    "--arf-boundary",
    "Content-Type: message/feedback-report",
    "",
    "Feedback-Type: abuse",
    "User-Agent: ISP-FBL/1.0",
    "Version: 1",
    `Original-Rcpt-To: ${recipient}`,
    "",
    "--arf-boundary",
    "Content-Type: message/rfc822",
    "",
    originalHeaders,
    "",
    "Body of the original.",
    "",
    "--arf-boundary--",
    ""
  ].join("\r\n")

export interface DmarcRow {
  readonly ip: string
  readonly count: number
  readonly dkim: "pass" | "fail"
  readonly spf: "pass" | "fail"
}

export const dmarcXml = (domain: string, reportId: string, begin: number, end: number, rows: ReadonlyArray<DmarcRow>) =>
  `<?xml version="1.0" encoding="UTF-8"?>
<feedback>
  <report_metadata><org_name>receiver.test</org_name><email>dmarc@receiver.test</email>
    <report_id>${reportId}</report_id><date_range><begin>${begin}</begin><end>${end}</end></date_range></report_metadata>
  <policy_published><domain>${domain}</domain><p>quarantine</p><pct>100</pct></policy_published>
${rows.map((r) => `  <record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count>
    <policy_evaluated><disposition>none</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated></row>
    <identifiers><header_from>${domain}</header_from></identifiers></record>`).join("\n")}
</feedback>`

/** A report mail carrying `xml` zipped, as most receivers send it. */
export const dmarcMail = (to: string, name: string, xml: string) => {
  const zip = Buffer.from(zipSync({ [`${name}.xml`]: new TextEncoder().encode(xml) }))
  return [
    "From: noreply-dmarc@receiver.test",
    `To: ${to}`,
    `Subject: Report Domain: ${name}`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="dmarc-boundary"',
    "",
    "--dmarc-boundary",
    "Content-Type: text/plain",
    "",
    "This is an aggregate report.",
    "--dmarc-boundary",
    `Content-Type: application/zip; name="${name}.zip"`,
    "Content-Transfer-Encoding: base64",
    `Content-Disposition: attachment; filename="${name}.zip"`,
    "",
    zip.toString("base64").replace(/.{76}/g, "$&\r\n"),
    "--dmarc-boundary--",
    ""
  ].join("\r\n")
}

/**
 * A feedback loop that signs its reports with DKIM for `domain` (one listed in
 * config/feedback-isps.json, for Herald to trust it), its public key served by `dns`.
 */
export const feedbackLoop = (dns: DnsServer, domain: string, selector = "fbl") => {
  // 1024 bits (mailauth's minimum) keeps the record within one 255-byte TXT string of the test server.
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 1024,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "der" }
  })
  dns.set(`${selector}._domainkey.${domain}`, { TXT: [`v=DKIM1; k=rsa; p=${publicKey.toString("base64")}`] })
  const key = prepareKey(domain, selector, privateKey)
  return {
    from: `feedback@${domain}`,
    sign: (raw: string) => signMessage(Buffer.from(raw), key)
  }
}
