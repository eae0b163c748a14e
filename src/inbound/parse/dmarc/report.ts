/**
 * The `<feedback>` tree → `DmarcReport`. Element names are those of RFC 7489 appendix C, which
 * the RFC 9990 schema keeps for every field read here (it adds np, testing, discovery_method,
 * generator — not needed here). Pre-RFC drafts called `<identifiers>` `<identities>`; both are read.
 *
 * Required (a report without them is an error, not a guess): report_metadata/report_id,
 * date_range/begin and /end, policy_published/domain and /p, and a non-negative integer `<count>`
 * in every record — `messages` is their sum, so one unreadable count would make it a lie.
 * `org_name` is required by both schemas but real reporters leave it empty; it is then "".
 */
import type { DmarcRecord, DmarcReport } from "../types.ts"
import { decodeEntities, type XmlObject, type XmlValue } from "./xml.ts"

export type ReportResult =
  | { readonly ok: true; readonly report: DmarcReport }
  | { readonly ok: false; readonly error: string }

const isObject = (value: XmlValue | undefined): value is XmlObject =>
  typeof value === "object" && !Array.isArray(value)

const isList = (value: XmlValue | undefined): value is ReadonlyArray<XmlValue> => Array.isArray(value)

/** The first occurrence of a child; a repeated element (not allowed there by the schema) is read once. */
const first = (value: XmlValue | undefined): XmlValue | undefined => (isList(value) ? value[0] : value)

const child = (node: XmlValue | undefined, name: string): XmlValue | undefined => {
  const one = first(node)
  return isObject(one) && Object.hasOwn(one, name) ? one[name] : undefined
}

/** Every occurrence of a child, in document order. */
const children = (node: XmlValue | undefined, name: string): ReadonlyArray<XmlValue> => {
  const value = child(node, name)
  if (value === undefined) return []
  return isList(value) ? value : [value]
}

/**
 * The element's text, entities decoded; null when absent. An element that also carries
 * attributes or stray children (RFC 9990 `langAttrString` has a `lang` attribute) still yields its
 * text.
 */
const text = (value: XmlValue | undefined): string | null => {
  const one = first(value)
  if (typeof one === "string") return decodeEntities(one).trim()
  if (isObject(one)) {
    const inner = one["#text"]
    return typeof inner === "string" ? decodeEntities(inner).trim() : ""
  }
  return null
}

/** Non-empty text or null (empty elements such as `<dkim/>` occur in real reports). */
const optional = (value: XmlValue | undefined): string | null => {
  const t = text(value)
  return t === null || t === "" ? null : t
}

/**
 * Epoch seconds. A fractional part is truncated rather than refused: the seconds are what the
 * schema means (xs:integer), and the fraction carries no information a report reader uses.
 */
const epoch = (value: string | null): number | null => {
  if (value === null || !/^\d{1,15}(?:\.\d*)?$/.test(value)) return null
  const n = Math.floor(Number(value))
  return Number.isSafeInteger(n) ? n : null
}

const count = (value: string | null): number | null => {
  if (value === null || !/^\d{1,15}$/.test(value)) return null
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : null
}

const lower = (value: string | null): string | null => (value === null ? null : value.toLowerCase())

export const toReport = (feedback: XmlObject): ReportResult => {
  const metadata = child(feedback, "report_metadata")
  const policy = child(feedback, "policy_published")
  const range = child(metadata, "date_range")
  const missing: Array<string> = []

  const reportId = optional(child(metadata, "report_id"))
  if (reportId === null) missing.push("report_metadata/report_id")
  const beginText = text(child(range, "begin"))
  const endText = text(child(range, "end"))
  const begin = epoch(beginText)
  const end = epoch(endText)
  if (begin === null) missing.push(`date_range/begin (${show(beginText)})`)
  if (end === null) missing.push(`date_range/end (${show(endText)})`)
  // Domain names compare case-insensitively (RFC 4343); the p tags are lower-case tokens.
  const domain = lower(optional(child(policy, "domain")))
  if (domain === null) missing.push("policy_published/domain")
  const p = lower(optional(child(policy, "p")))
  if (p === null) missing.push("policy_published/p")

  const rows: Array<DmarcRecord> = []
  let messages = 0
  const records = children(feedback, "record")
  for (let i = 0; i < records.length; i++) {
    const record = records[i]
    const row = child(record, "row")
    const evaluated = child(row, "policy_evaluated")
    const identifiers = child(record, "identifiers") ?? child(record, "identities")
    const countText = text(child(row, "count"))
    const n = count(countText)
    if (n === null) {
      missing.push(`record ${i + 1}: row/count (${show(countText)})`)
      continue
    }
    messages += n
    rows.push({
      source_ip: text(child(row, "source_ip")) ?? "",
      count: n,
      // RFC 7489 appendix C enumerates these as lower-case tokens; reporters write "Pass", "None".
      disposition: lower(optional(child(evaluated, "disposition"))),
      dkim: lower(optional(child(evaluated, "dkim"))),
      spf: lower(optional(child(evaluated, "spf"))),
      header_from: lower(optional(child(identifiers, "header_from"))),
    })
  }

  if (missing.length > 0 || reportId === null || begin === null || end === null || domain === null || p === null) {
    const shown = missing.slice(0, 5).join("; ") + (missing.length > 5 ? `; and ${missing.length - 5} more` : "")
    return { ok: false, error: `DMARC report is missing or has unreadable required fields: ${shown}` }
  }
  if (!Number.isSafeInteger(messages)) return { ok: false, error: "DMARC report: the sum of <count> overflows" }
  return {
    ok: true,
    report: {
      org_name: text(child(metadata, "org_name")) ?? "",
      report_id: reportId,
      domain,
      policy_p: p,
      date_begin: begin,
      date_end: end,
      records: rows.length,
      messages,
      rows,
    },
  }
}

const show = (value: string | null): string =>
  value === null ? "absent" : value === "" ? "empty" : JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
