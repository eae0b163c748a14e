/**
 * The bounds every request field is declared with (issue 26, "every input has a bound in its
 * schema"): what one field may cost is known from its schema, before any handler runs, and the
 * bound is visible in the served OpenAPI documents (test/http/input-bounds.test.ts walks them and
 * fails for a string without `maxLength`, an array without `maxItems`, or an open object without
 * its serialised size and depth, so a new endpoint cannot forget one).
 *
 * A field over its bound is a 400 `validation_failed` whose `param` names it (the schema's own
 * decode failure); 413 `payload_too_large` stays for the whole body and the attachments. The
 * values are named here once, chosen so that nothing the contract allows is refused (docs/api.md
 * "Input bounds"): 1,000 personalizations, a MAX_JSON_MB body, the attachment limits, 998-character
 * header lines, 254-character addresses.
 */
import { Schema } from "effect"
import { storable } from "../lib/text.ts"

const KB = 1024
const MB = 1024 * KB

/** Ids of Herald's resources (`ct_` + 20 base62 characters, `sandbox-msg_…`) and what clients name them by. */
export const MAX_ID_LENGTH = 64
/** A name or label shown in lists (contacts, lists, segments, templates, campaigns, keys). */
export const MAX_NAME_LENGTH = 200
/** One header line's worth (RFC 5322 §2.1.1): subjects, sender names, preheaders. */
export const MAX_LINE_LENGTH = 998
/** RFC 5321 §4.5.3.1 path (256) minus the angle brackets. */
export const MAX_EMAIL_LENGTH = 254
/** RFC 1035 §2.3.4, in text form. */
export const MAX_DOMAIN_LENGTH = 253
/** A URL a client gives (webhook endpoints): what browsers and proxies reliably carry. */
export const MAX_URL_LENGTH = 2048
/** A search text or filter value in a query. */
export const MAX_QUERY_TEXT_LENGTH = 200
/** A number in a query string (limit, offset, page): more digits than any page or offset needs. */
export const MAX_QUERY_NUMBER_LENGTH = 16
/** An ISO 8601 date-time with fractions and an offset, or Unix seconds. */
export const MAX_DATE_LENGTH = 40
/** Template, campaign and step content fields (html, mjml, text): the template bound, 512 KB together. */
export const MAX_CONTENT_LENGTH = 512 * KB
/** How the OpenAPI documents show a text bounded only by the body (the send's content): MAX_JSON_MB's default. */
export const DEFAULT_BODY_BYTES = 15 * MB

/**
 * Contact metadata: what the big ESPs allow for custom fields (tens of KB), far above any real
 * profile, and small enough that a page of 200 contacts stays a few MB (docs/api.md "Input bounds").
 * Measured as compact JSON in UTF-8; depth counts the metadata object itself as 1.
 */
export const MAX_METADATA_BYTES = 32 * KB
export const MAX_METADATA_DEPTH = 5
/** Template variables (defaults, preview and test-send samples): room for a product list to loop over. */
export const MAX_VARS_BYTES = 64 * KB
export const MAX_VARS_DEPTH = 8

/**
 * A string of at most `max` characters that can be stored (no NUL, no lone surrogate), optionally
 * trimmed and with a minimum length after trimming. The bound is on the encoded side, so the
 * OpenAPI documents show it (a transformation is documented by what it reads).
 */
export const boundedText = (
  max: number,
  options: { readonly trim?: boolean; readonly minLength?: number; readonly description?: string } = {}
) => {
  const raw = storable(Schema.String.pipe(Schema.maxLength(max)))
  const read = options.trim === true ? Schema.compose(raw, Schema.Trim) : raw
  const checked = options.minLength === undefined ? read : read.pipe(Schema.minLength(options.minLength))
  return options.description === undefined ? checked : checked.annotations({ description: options.description })
}

/** A resource id in a path, query or body. */
export const IdText = boundedText(MAX_ID_LENGTH)
/** The usual name field: trimmed, at most MAX_NAME_LENGTH characters. */
export const NameText = boundedText(MAX_NAME_LENGTH, { trim: true })
/** One header line's worth of text. */
export const LineText = boundedText(MAX_LINE_LENGTH)
/** A search or filter text in a query string. */
export const QueryText = boundedText(MAX_QUERY_TEXT_LENGTH)
/** Template, campaign and sequence step content (html, mjml, text). */
export const ContentText = boundedText(MAX_CONTENT_LENGTH)

/**
 * Text bounded by the whole body only (the send's content and attachments): no bound of its own
 * could be tighter without refusing what MAX_JSON_MB admits, so the document shows the body's
 * bound at its default and names the setting.
 */
export const bodyBoundedText = <A extends string, I extends string, R>(self: Schema.Schema<A, I, R>) =>
  self.pipe(Schema.filter(() => true, { jsonSchema: { maxLength: DEFAULT_BODY_BYTES, "x-max-bytes-setting": "MAX_JSON_MB" } }))

/** An array of at most `max` items. */
export const boundedArray = <A, I, R>(item: Schema.Schema<A, I, R>, max: number) => Schema.Array(item).pipe(Schema.maxItems(max))

/** An integer in a query string, from `min` to `max`. */
export const queryInt = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  Schema.compose(Schema.String.pipe(Schema.maxLength(MAX_QUERY_NUMBER_LENGTH)), Schema.NumberFromString).pipe(
    Schema.int(),
    Schema.between(min, max)
  )

/** The nesting depth of a JSON value: a scalar is 0, `{}` and `[]` are 1. */
export const jsonDepth = (value: unknown): number => {
  if (typeof value !== "object" || value === null) return 0
  let deepest = 0
  for (const member of Array.isArray(value) ? value : Object.values(value)) {
    const depth = jsonDepth(member)
    if (depth > deepest) deepest = depth
  }
  return deepest + 1
}

/** A value's size as compact JSON in UTF-8, the unit of every free-form bound. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8")

/**
 * At most what `value` costs as compact JSON, counted without serialising it: each string's
 * length (UTF-8 never takes fewer bytes than UTF-16 code units) with its quotes, and one byte per
 * other token. Stops once past `limit`, so a 10 MB value over a 32 KB bound is refused without
 * being copied.
 */
const jsonBytesAtLeast = (value: unknown, limit: number): number => {
  let total = 0
  const visit = (node: unknown): void => {
    if (total > limit) return
    if (typeof node === "string") total += node.length + 2
    else if (typeof node !== "object" || node === null) total += 1
    else if (Array.isArray(node)) {
      total += 1 + node.length
      for (const member of node) visit(member)
    } else {
      for (const key of Object.keys(node)) {
        total += key.length + 4
        visit((node as Record<string, unknown>)[key])
      }
      total += 1
    }
  }
  visit(value)
  return total
}

/** A value's compact JSON size when it is at most `limit`; otherwise some number over `limit`. */
export const jsonBytesUpTo = (value: unknown, limit: number): number => {
  const atLeast = jsonBytesAtLeast(value, limit)
  return atLeast > limit ? atLeast : jsonBytes(value)
}

/**
 * A free-form JSON object (contact metadata, template variables) of at most `maxBytes` as compact
 * JSON and `maxDepth` levels (the object itself is level 1). The bound shows in the documents as
 * `x-max-bytes` and `x-max-depth`, and in the description.
 */
export const freeFormObject = (options: { readonly maxBytes: number; readonly maxDepth: number; readonly description: string }) =>
  Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
    Schema.filter((value) => {
      const depth = jsonDepth(value)
      if (depth > options.maxDepth) return `must nest at most ${options.maxDepth} levels (${depth} given)`
      const bytes = jsonBytesUpTo(value, options.maxBytes)
      return bytes <= options.maxBytes || `must be at most ${options.maxBytes} bytes as JSON (at least ${bytes} given)`
    }, { jsonSchema: { "x-max-bytes": options.maxBytes, "x-max-depth": options.maxDepth } }),
    Schema.annotations({
      description: `${options.description}. At most ${options.maxBytes / KB} KB as compact JSON and ${options.maxDepth} levels deep`
    })
  )

/** Contact metadata (create, PATCH, import rows; also the result of an import's merge). */
export const ContactMetadata = freeFormObject({
  maxBytes: MAX_METADATA_BYTES,
  maxDepth: MAX_METADATA_DEPTH,
  description: "Custom fields (a JSON object); the segment rule `custom` reads it"
})

/** Template variables: defaults, and the samples of a preview or test-send. */
export const TemplateVars = freeFormObject({
  maxBytes: MAX_VARS_BYTES,
  maxDepth: MAX_VARS_DEPTH,
  description: "Variables (a JSON object)"
})

/** A raw (non-JSON) body, such as an import's CSV: bounded by the body limit it names. */
export const rawBodyBoundedBy = (setting: string) => ({ type: "string", maxLength: DEFAULT_BODY_BYTES, "x-max-bytes-setting": setting })

/** A password (admin accounts, plan changes): far above any passphrase, far below what hashing one should cost. */
export { MAX_PASSWORD_LENGTH } from "../lib/password-rules.ts"
