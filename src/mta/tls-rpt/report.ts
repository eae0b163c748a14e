/**
 * The TLS-RPT aggregate report (RFC 8460 §4): one JSON document per policy domain and UTC day,
 * with the field names of §4.4 exactly, gzip-compressed (§5.1), and the mail that carries it
 * (§5.3: multipart/report; report-type="tlsrpt", the report as application/tlsrpt+gzip). Pure.
 */
import { gzipSync } from "node:zlib"

/** One group of sessions to the policy domain: an MX host and how its TLS went (tls_failure null: success). */
export interface SessionGroup {
  readonly host: string | null
  readonly failure: string | null
  readonly sessions: number
}

export interface ReportInput {
  readonly policyDomain: string
  /** The UTC day reported, 00:00 of it. */
  readonly day: Date
  /** The MTA-STS policy in force (its text and mx patterns), or null: `no-policy-found`. */
  readonly policy: { readonly text: string; readonly mx: ReadonlyArray<string> } | null
  readonly groups: ReadonlyArray<SessionGroup>
  /** The appliance's host name: organization-name, the submitter. */
  readonly submitter: string
  readonly contact: string
}

/** Failure-detail groups kept per report: a domain with thousands of failing MX names still gets a bounded report. */
export const MAX_FAILURE_DETAILS = 100
/** The compressed report's largest size; RFC 8460 leaves it to the sender (receivers commonly take mail of a few MB). */
export const MAX_REPORT_BYTES = 1_048_576

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

export const reportId = (input: Pick<ReportInput, "policyDomain" | "day" | "submitter">) =>
  `${input.day.toISOString().slice(0, 10)}_${input.policyDomain}@${input.submitter}`

/** The report as RFC 8460 §4.4 writes it. */
export const buildReport = (input: ReportInput) => {
  const start = input.day.getTime()
  const successes = input.groups.filter((g) => g.failure === null).reduce((n, g) => n + g.sessions, 0)
  const failures = input.groups.filter((g) => g.failure !== null)
  const details = failures.slice(0, MAX_FAILURE_DETAILS).map((g) => ({
    "result-type": g.failure!,
    ...(g.host === null ? {} : { "receiving-mx-hostname": g.host }),
    "failed-session-count": g.sessions
  }))
  return {
    "organization-name": input.submitter,
    "date-range": { "start-datetime": iso(start), "end-datetime": iso(start + 86_400_000 - 1_000) },
    "contact-info": input.contact,
    "report-id": reportId(input),
    policies: [{
      policy: input.policy === null
        ? { "policy-type": "no-policy-found", "policy-domain": input.policyDomain }
        : {
          "policy-type": "sts",
          "policy-string": input.policy.text.split("\n").filter((line) => line.trim() !== ""),
          "policy-domain": input.policyDomain,
          "mx-host": [...input.policy.mx]
        },
      summary: {
        "total-successful-session-count": successes,
        "total-failure-session-count": failures.reduce((n, g) => n + g.sessions, 0)
      },
      ...(details.length === 0 ? {} : { "failure-details": details })
    }]
  }
}

/** The report gzip-compressed, or null when even its bounded form is larger than MAX_REPORT_BYTES. */
export const compressReport = (report: ReturnType<typeof buildReport>): Buffer | null => {
  const gz = gzipSync(JSON.stringify(report))
  return gz.length <= MAX_REPORT_BYTES ? gz : null
}

/** RFC 8460 §5.3 file name: submitter!policy-domain!begin!end (seconds since the epoch). */
export const reportFileName = (input: Pick<ReportInput, "policyDomain" | "day" | "submitter">) => {
  const begin = Math.floor(input.day.getTime() / 1000)
  return `${input.submitter}!${input.policyDomain}!${begin}!${begin + 86_399}.json.gz`
}

/** The report mail (RFC 8460 §5.3), unsigned, CRLF line ends. */
export const reportMail = (input: ReportInput, from: string, to: string, gz: Buffer, date: Date): Buffer => {
  const id = reportId(input)
  const boundary = `tlsrpt-${Buffer.from(id).toString("hex").slice(0, 24)}`
  const lines = [
    `From: ${from}`,
    `To: ${to}`,
    `Subject: Report Domain: ${input.policyDomain} Submitter: ${input.submitter} Report-ID: <${id}>`,
    `Date: ${date.toUTCString().replace("GMT", "+0000")}`,
    `Message-ID: <${id}.${date.getTime()}@${from.split("@")[1] ?? input.submitter}>`,
    `TLS-Report-Domain: ${input.policyDomain}`,
    `TLS-Report-Submitter: ${input.submitter}`,
    "MIME-Version: 1.0",
    `Content-Type: multipart/report; report-type="tlsrpt"; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    `This is an aggregate TLS report (RFC 8460) from ${input.submitter} for ${input.policyDomain}.`,
    `--${boundary}`,
    "Content-Type: application/tlsrpt+gzip",
    "Content-Transfer-Encoding: base64",
    `Content-Disposition: attachment; filename="${reportFileName(input)}"`,
    "",
    ...(gz.toString("base64").match(/.{1,76}/g) ?? []),
    `--${boundary}--`,
    ""
  ]
  return Buffer.from(lines.join("\r\n"), "utf8")
}
