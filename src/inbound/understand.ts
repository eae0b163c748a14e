/**
 * What Herald understands of one inbound message: the parsers tried in a fixed order, most
 * specific first. A DMARC aggregate report is recognised by its attachment's content, a feedback
 * report by its report part (or a known non-ARF form), and only then is a message read as a
 * bounce — a complaint encloses the original just like a bounce does, so the order matters.
 * Pure and synchronous: no database, no clock (the `parse` command uses it); async only in
 * signature, for its callers.
 */
import { parseBounce } from "./parse/bounce.ts"
import { parseComplaint } from "./parse/complaint.ts"
import { parseDmarcBytes, parseDmarcMail } from "./parse/dmarc/index.ts"
import { readMail } from "./parse/mail.ts"
import type { DmarcReport, Understood } from "./parse/types.ts"

export const understandMessage = async (raw: Buffer): Promise<Understood> => {
  const mail = readMail(raw)
  const dmarc = parseDmarcMail(mail)
  if (dmarc !== null) return dmarcResult(dmarc.reports, dmarc.errors)
  const complaint = parseComplaint(mail, raw)
  if (complaint !== null) return { kind: "complaint", complaint }
  const bounce = parseBounce(mail, raw)
  if (bounce !== null) return { kind: "bounce", bounce }
  return { kind: "other" }
}

const GZIP = [0x1f, 0x8b]
const ZIP = [0x50, 0x4b, 0x03, 0x04]
const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>) => magic.every((b, i) => bytes[i] === b)

/** A bare DMARC attachment (xml, gzip or zip) rather than an e-mail, judged by its first bytes. */
const looksLikeBareReport = (bytes: Uint8Array) => {
  if (startsWith(bytes, GZIP) || startsWith(bytes, ZIP)) return true
  const head = Buffer.from(bytes.subarray(0, 512)).toString("utf8").replace(/^\uFEFF/, "").trimStart()
  return head.startsWith("<?xml") || head.startsWith("<feedback")
}

/**
 * A file as an operator hands it to `herald parse`: an e-mail, or a bare DMARC attachment — known
 * by its first bytes, or by its name when it has none to judge by (an empty `.xml` is a broken
 * report, not an empty e-mail).
 */
export const understandFile = async (bytes: Buffer, name = ""): Promise<Understood> => {
  if (looksLikeBareReport(bytes) || (bytes.length === 0 && /\.(xml|gz|zip)$/i.test(name))) {
    const parsed = parseDmarcBytes(bytes)
    return dmarcResult(parsed.reports, parsed.errors)
  }
  return understandMessage(bytes)
}

const dmarcResult = (reports: ReadonlyArray<DmarcReport>, errors: ReadonlyArray<string>): Understood =>
  errors.length === 0 ? { kind: "dmarc", dmarc: reports } : { kind: "dmarc", dmarc: reports, error: errors.join("; ") }
