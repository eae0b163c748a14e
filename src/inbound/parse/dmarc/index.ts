/**
 * DMARC aggregate reports (RFC 7489 §7.2, RFC 9990): bare report files and report e-mails.
 * Pure and total — every outcome, including refusals and limit breaches, is a value; nothing throws.
 */
import type { ParsedMail } from "../mail.ts"
import type { DmarcReport } from "../types.ts"
import { toReport } from "./report.ts"
import { type Budget, type DmarcLimits, defaultDmarcLimits, newBudget, sniff, unpack, type XmlDocument } from "./unpack.ts"
import { decodeXmlBytes, hasFeedbackRoot, parseFeedbackXml, tooLarge } from "./xml.ts"

export { type DmarcLimits, defaultDmarcLimits } from "./unpack.ts"

/**
 * The limits a parse uses when its caller names none: the defaults, or what the appliance was
 * configured with (HERALD_DMARC_MAX_RECORDS). Set once per thread at start-up — in each parse
 * worker from its workerData, in the main thread by the processor — because the parsers' callers
 * (`understandMessage`) take bytes only.
 */
let configuredLimits: DmarcLimits = defaultDmarcLimits
export const configureDmarcLimits = (limits: DmarcLimits): void => {
  configuredLimits = limits
}

export interface DmarcParse {
  readonly reports: ReadonlyArray<DmarcReport>
  readonly errors: ReadonlyArray<string>
}

interface Outcome {
  readonly reports: Array<DmarcReport>
  readonly errors: Array<string>
  /** Documents with a `<feedback>` root, read or not: the evidence that this is a DMARC report. */
  feedbackSeen: number
  /** Container failures (corrupt, over a limit), kept apart: on their own they prove nothing. */
  readonly containerErrors: Array<string>
  readonly skipped: Array<string>
}

const emptyOutcome = (): Outcome => ({ reports: [], errors: [], feedbackSeen: 0, containerErrors: [], skipped: [] })

const readBytes = (bytes: Uint8Array, prefix: string, limits: DmarcLimits, budget: Budget, into: Outcome): void => {
  const unpacked = unpack(bytes, limits, budget)
  for (const e of unpacked.errors) into.containerErrors.push(prefix + e)
  for (const s of unpacked.skipped) into.skipped.push(prefix + s)
  for (const doc of unpacked.documents) readDocument(doc, prefix, limits, into)
}

const readDocument = (doc: XmlDocument, prefix: string, limits: DmarcLimits, into: Outcome): void => {
  const text = decodeXmlBytes(doc.bytes)
  if (!hasFeedbackRoot(text)) {
    into.skipped.push(`${prefix}${doc.where}: XML without a <feedback> root (not an aggregate report)`)
    return
  }
  into.feedbackSeen += 1
  const refused = tooLarge(text, limits.maxRecords)
  if (refused !== null) {
    into.errors.push(`${prefix}${doc.where}: ${refused}`)
    return
  }
  const tree = parseFeedbackXml(text)
  if (!tree.ok) {
    into.errors.push(`${prefix}${doc.where}: ${tree.error}`)
    return
  }
  const mapped = toReport(tree.feedback)
  if (mapped.ok) into.reports.push(mapped.report)
  else into.errors.push(`${prefix}${doc.where}: ${mapped.error}`)
}

const guard = <A>(run: () => A, fallback: (e: unknown) => A): A => {
  try {
    return run()
  } catch (e) {
    // Defence in depth: the code paths above catch their own failures; a library surprise must
    // still reach the caller as an error value, never as an exception in the MX listener.
    return fallback(e)
  }
}

const describe = (e: unknown) => `internal error while reading the report: ${e instanceof Error ? e.message : String(e)}`

/** A bare report file or attachment body: xml, gzip (also gzip in gzip), or zip — identified by content. */
export const parseDmarcBytes = (bytes: Uint8Array, limits: DmarcLimits = configuredLimits): DmarcParse =>
  guard(
    () => {
      if (bytes.length === 0) return { reports: [], errors: ["empty input (0 bytes): no DMARC report"] }
      const outcome = emptyOutcome()
      readBytes(bytes, "", limits, newBudget(limits), outcome)
      const errors = [...outcome.containerErrors, ...outcome.errors]
      if (outcome.reports.length === 0 && errors.length === 0) {
        errors.push(`no DMARC aggregate report found (${outcome.skipped.join("; ") || "nothing readable"})`)
      }
      return { reports: outcome.reports, errors }
    },
    (e) => ({ reports: [], errors: [describe(e)] }),
  )

/**
 * RFC 7489 §7.2.1.1 report subjects ("Report Domain: … Report-ID: …") and file names
 * ("receiver!policy-domain!begin!end"). Used only to decide whether a container that cannot be
 * opened should be reported as a failed DMARC report; the format itself is always decided by content.
 */
const REPORT_SUBJECT = /report\s*domain\s*:|report-id\s*:/i
const REPORT_FILENAME = /![^!]*!\d{6,}!\d{6,}/

/**
 * An e-mail: every attachment (or the body itself) that is a DMARC aggregate report.
 * null when the mail carries none (it is not a DMARC report mail).
 */
export const parseDmarcMail = (mail: ParsedMail, limits: DmarcLimits = configuredLimits): DmarcParse | null =>
  guard(
    (): DmarcParse | null => {
      const budget = newBudget(limits)
      const outcome = emptyOutcome()
      const subjectHint = REPORT_SUBJECT.test(mail.subject ?? "")
      let hintedContainerErrors = 0
      const attachments = mail.attachments ?? []
      attachments.forEach((attachment, i) => {
        const content: unknown = attachment.content
        if (!(content instanceof Uint8Array)) return
        const kind = sniff(content)
        // The cheap gate: anything not starting like XML, gzip or zip (message/rfc822 originals,
        // delivery-status, text) is skipped without decoding.
        if (kind === "empty" || kind === "unknown") return
        const name = attachment.filename ?? `#${i + 1}`
        const before = outcome.containerErrors.length
        readBytes(content, `attachment ${JSON.stringify(name)}: `, limits, budget, outcome)
        const hinted = subjectHint || REPORT_FILENAME.test(attachment.filename ?? "")
        if (hinted) hintedContainerErrors += outcome.containerErrors.length - before
        else outcome.containerErrors.splice(before)
      })
      // RFC 7489 §7.2.1.1 asks for an attachment; a report pasted as the text body is read all the same.
      const body = typeof mail.text === "string" ? mail.text.trimStart() : ""
      if (body.startsWith("<") && hasFeedbackRoot(body)) {
        readBytes(new TextEncoder().encode(body), "body: ", limits, budget, outcome)
      }
      if (outcome.feedbackSeen === 0 && hintedContainerErrors === 0) return null
      return { reports: outcome.reports, errors: [...outcome.containerErrors, ...outcome.errors] }
    },
    (e) => ({ reports: [], errors: [describe(e)] }),
  )
