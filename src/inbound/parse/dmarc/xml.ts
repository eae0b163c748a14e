/**
 * The XML side of a DMARC aggregate report: bytes → text → a plain tree of the `<feedback>`
 * element. Both schemas are read by element *local* names, so the RFC 7489 appendix C document
 * (no namespace), the pre-RFC drafts and RFC 9990 (`urn:ietf:params:xml:ns:dmarc-2.0`, default
 * namespace or any prefix) yield the same tree.
 *
 * Safety: reports arrive from anyone. A document carrying `<!DOCTYPE` or `<!ENTITY` is refused
 * before any parser sees it — no report needs a DTD (neither schema declares one), and refusing it
 * outright closes XXE and entity-expansion ("billion laughs") in one place instead of trusting a
 * parser's expansion limits. fast-xml-parser additionally runs with `processEntities: false`; the
 * five predefined entities and character references are decoded afterwards by `decodeEntities`,
 * which cannot grow text beyond its input length.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser"

/** A parsed element: a string for text-only elements, an object (child name → value) otherwise. */
export type XmlValue = string | XmlObject | ReadonlyArray<XmlValue>
export interface XmlObject {
  readonly [name: string]: XmlValue | undefined
}

export type FeedbackTree =
  | { readonly ok: true; readonly feedback: XmlObject; readonly wellFormed: boolean }
  | { readonly ok: false; readonly error: string }

/**
 * Bytes → string. Reporters mislabel encodings and emit stray bytes (the corpus has a lone 0x91
 * inside a UTF-8 document), so decoding never fails: invalid sequences become U+FFFD and the rest
 * of the report stays readable. BOMs and the XML declaration's `encoding` (XML 1.0 §4.3.3 and
 * appendix F) are honoured when the label is one TextDecoder knows; anything else is read as UTF-8.
 */
export const decodeXmlBytes = (bytes: Uint8Array): string => {
  const b0 = bytes[0]
  const b1 = bytes[1]
  if (b0 === 0xef && b1 === 0xbb && bytes[2] === 0xbf) return decodeAs("utf-8", bytes.subarray(3))
  if (b0 === 0xff && b1 === 0xfe) return decodeAs("utf-16le", bytes.subarray(2))
  if (b0 === 0xfe && b1 === 0xff) return decodeAs("utf-16be", bytes.subarray(2))
  // Appendix F: UTF-16 without a BOM still starts with "<" as 00 3C / 3C 00.
  if (b0 === 0x00 && b1 === 0x3c) return decodeAs("utf-16be", bytes)
  if (b0 === 0x3c && b1 === 0x00) return decodeAs("utf-16le", bytes)
  const head = latin1(bytes.subarray(0, 256))
  const declared = /^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1]
  return decodeAs(declared ?? "utf-8", bytes)
}

const latin1 = (bytes: Uint8Array): string => {
  let out = ""
  for (const b of bytes) out += String.fromCharCode(b)
  return out
}

const decodeAs = (label: string, bytes: Uint8Array): string => {
  try {
    return new TextDecoder(label, { fatal: false }).decode(bytes)
  } catch {
    // An unknown label (RangeError) falls back to UTF-8, the encoding both schemas presume.
    return new TextDecoder("utf-8", { fatal: false }).decode(bytes)
  }
}

/** The root start tag of an aggregate report, with or without a namespace prefix. */
const FEEDBACK_START = /<((?:[A-Za-z_][\w.-]*:)?feedback)(?=[\s>/])/

/**
 * Is this text a DMARC aggregate report? Only a `<feedback` start tag counts — never a file name,
 * a content type or a subject — so bounces, complaints and other XML never misfire.
 */
export const hasFeedbackRoot = (text: string): boolean => FEEDBACK_START.test(text)

const DTD = /<!\s*(?:DOCTYPE|ENTITY)/i

/** Elements a record may carry (RFC 7489 has ~25 in a rich one); the rest of the document is a few dozen. */
const ELEMENTS_PER_RECORD = 64
const ELEMENTS_OUTSIDE_RECORDS = 1000
const RECORD_START = /<(?:[A-Za-z_][\w.-]*:)?record(?=[\s>/])/g
const ELEMENT_START = /<[A-Za-z_]/g

const countUpTo = (pattern: RegExp, text: string, max: number): number => {
  pattern.lastIndex = 0
  let n = 0
  while (n <= max && pattern.exec(text) !== null) n++
  return n
}

/**
 * Refuses a document that would build too large a tree, before any parser sees it: more than
 * `maxRecords` `<record>` elements, or more elements in all than that many records could hold
 * (so a report cannot grow its tree with thousands of stray elements instead). A scan of the text,
 * stopping at the limit; null when the document is within it.
 */
export const tooLarge = (text: string, maxRecords: number): string | null => {
  if (countUpTo(RECORD_START, text, maxRecords) > maxRecords) {
    return `refused: the report has more than ${maxRecords} <record> elements (the DMARC record limit; it was not parsed)`
  }
  const maxElements = maxRecords * ELEMENTS_PER_RECORD + ELEMENTS_OUTSIDE_RECORDS
  if (countUpTo(ELEMENT_START, text, maxElements) > maxElements) {
    return `refused: the report has more than ${maxElements} elements (${ELEMENTS_PER_RECORD} per record allowed; it was not parsed)`
  }
  return null
}

const parser = new XMLParser({
  processEntities: false,
  htmlEntities: false,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  removeNSPrefix: true,
  // Report values are identifiers (report ids like "0012…", IPs); number coercion would corrupt them.
  parseTagValue: false,
  trimValues: true,
  // DMARC nests five levels deep; the default of 100 only stops pathological input.
  maxNestedTags: 100,
})

/**
 * Text → the `<feedback>` element as a tree.
 *
 * "Still readable" (the tolerant path, taken only when a strict check fails) means exactly this:
 * after (1) decoding with replacement characters, (2) cutting out the first `<feedback …>` up to
 * the last matching `</feedback>` — which drops anything a broken generator wrote around it, such as
 * the unclosed `<xs:schema>` start tag in one corpus report — and (3) reading every `<` that does
 * not begin syntactically valid markup, and every `&` that does not begin a reference, as literal
 * text (the rule HTML parsers apply; it turns `<email><bad@x.net></email>` into the text
 * `<bad@x.net>`), the element is well-formed. Anything still broken — a truncated document, mismatched
 * tags — is an error, never a guess. The report mapping then still demands every required field.
 */
export const parseFeedbackXml = (text: string): FeedbackTree => {
  if (DTD.test(text)) {
    return {
      ok: false,
      error: "refused: the document has a <!DOCTYPE>/<!ENTITY> declaration (no DMARC report needs one; XXE and entity expansion are not allowed)",
    }
  }
  const strict = XMLValidator.validate(text)
  if (strict === true) {
    const feedback = rootFeedback(safeParse(text))
    if (feedback !== null) return { ok: true, feedback, wellFormed: true }
  }
  const strictProblem = strict === true ? "no <feedback> root element" : describe(strict.err)
  const slice = cutFeedback(text)
  if (slice === null) {
    return { ok: false, error: `not a readable DMARC report: ${strictProblem}, and no complete <feedback>…</feedback> element (truncated?)` }
  }
  const repaired = repairText(slice)
  const second = XMLValidator.validate(repaired)
  if (second !== true) {
    return { ok: false, error: `not well-formed XML (${strictProblem}); still broken after isolating <feedback> and escaping stray "<"/"&" (${describe(second.err)})` }
  }
  const feedback = rootFeedback(safeParse(repaired))
  if (feedback === null) return { ok: false, error: `not a readable DMARC report: ${strictProblem}` }
  return { ok: true, feedback, wellFormed: false }
}

const describe = (err: { readonly msg: string; readonly line: number; readonly col: number }): string =>
  `line ${err.line}, column ${err.col}: ${err.msg}`

const safeParse = (text: string): unknown => {
  try {
    return parser.parse(text) as unknown
  } catch {
    return null
  }
}

const isObject = (value: unknown): value is XmlObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const rootFeedback = (doc: unknown): XmlObject | null => {
  if (!isObject(doc)) return null
  const root = doc["feedback"]
  if (isObject(root)) return root
  // `<feedback/>` or a text-only root parses to a string: an empty report, which the mapping refuses.
  if (typeof root === "string") return {}
  return null
}

const cutFeedback = (text: string): string | null => {
  const start = FEEDBACK_START.exec(text)
  if (start === null) return null
  const close = `</${start[1]!}`
  let at = text.lastIndexOf(close)
  while (at > start.index) {
    const end = /^\s*>/.exec(text.slice(at + close.length, at + close.length + 64))
    if (end !== null) return text.slice(start.index, at + close.length + end[0].length)
    at = text.lastIndexOf(close, at - 1)
  }
  return null
}

const NAME = "[A-Za-z_][\\w.:-]*"
/** A `<` that starts none of: comment, CDATA, PI, end tag, start/empty tag with quoted attributes. */
const STRAY_LT = new RegExp(
  `<(?!!--|!\\[CDATA\\[|\\?|/${NAME}\\s*>|${NAME}(?:\\s+${NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*\\s*/?>)`,
  "g",
)
const STRAY_AMP = /&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)/g

const repairText = (text: string): string => text.replace(STRAY_LT, "&lt;").replace(STRAY_AMP, "&amp;")

const PREDEFINED: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" }

/**
 * The predefined entities (XML 1.0 §4.6) and character references; anything else stays verbatim
 * (without a DTD no other entity can be defined). Each reference shrinks or keeps length, so there is
 * no expansion to bound.
 */
export const decodeEntities = (text: string): string =>
  text.indexOf("&") < 0
    ? text
    : text.replace(/&(#x[0-9A-Fa-f]{1,6}|#\d{1,7}|lt|gt|amp|quot|apos);/g, (whole, ref: string) => {
        if (ref[0] !== "#") return PREDEFINED[ref] ?? whole
        const code = ref[1] === "x" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10)
        return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole
      })
