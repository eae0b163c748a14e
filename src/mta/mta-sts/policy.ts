/**
 * MTA-STS (RFC 8461) as text: the `_mta-sts` TXT record (§3.1), the policy file (§3.2) and the
 * matching of MX host names against the policy's `mx` patterns (§4.1). Pure: the lookups and the
 * fetch are in ./MtaSts.ts and ./fetch.ts.
 */

export type PolicyMode = "enforce" | "testing" | "none"

export interface Policy {
  readonly mode: PolicyMode
  /** `mx` patterns, lower case: a name, or `*.` and a name (one leftmost label). */
  readonly mx: ReadonlyArray<string>
  /** Seconds the policy may be cached (0 .. 31557600, RFC 8461 §3.2). */
  readonly maxAge: number
  /** The policy as fetched, normalised to LF line ends (the TLS-RPT report's `policy-string`). */
  readonly text: string
}

/** RFC 8461 §3.2: max_age is at most one year. */
const MAX_AGE_LIMIT = 31_557_600

/**
 * The `id` of the domain's `_mta-sts` TXT records, or null when there is no valid one. Records
 * not starting with `v=STSv1` are ignored; more than one STSv1 record is as if none (§3.1).
 */
export const parseStsRecord = (records: ReadonlyArray<string>): string | null => {
  const sts = records.filter((r) => /^v=STSv1\s*(;|$)/.test(r))
  if (sts.length !== 1) return null
  for (const field of sts[0]!.split(";")) {
    const match = /^\s*id=([A-Za-z0-9]{1,32})\s*$/.exec(field)
    if (match !== null) return match[1]!
  }
  return null
}

/** The `rua` destinations of the `_smtp._tls` TXT records (RFC 8460 §3), or [] when none is valid. */
export const parseTlsRptRecord = (records: ReadonlyArray<string>): ReadonlyArray<string> => {
  const rpt = records.filter((r) => /^v=TLSRPTv1\s*(;|$)/.test(r))
  if (rpt.length !== 1) return []
  for (const field of rpt[0]!.split(";")) {
    const match = /^\s*rua=(.*)$/.exec(field)
    if (match !== null) {
      return match[1]!.split(",").map((uri) => uri.trim()).filter((uri) => /^(mailto:|https:)/i.test(uri))
    }
  }
  return []
}

/** The policy file parsed, or the reason it is invalid (RFC 8461 §3.2). */
export const parsePolicy = (body: string): Policy | string => {
  const text = body.replace(/\r\n/g, "\n")
  const fields = new Map<string, Array<string>>()
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    const colon = line.indexOf(":")
    if (colon < 0) return `malformed line: ${line.slice(0, 80)}`
    const key = line.slice(0, colon).trim()
    fields.set(key, [...(fields.get(key) ?? []), line.slice(colon + 1).trim()])
  }
  if (fields.get("version")?.[0] !== "STSv1") return "version is not STSv1"
  const mode = fields.get("mode")?.[0]
  if (mode !== "enforce" && mode !== "testing" && mode !== "none") return `mode ${mode ?? "(missing)"} is not enforce, testing or none`
  const maxAgeText = fields.get("max_age")?.[0] ?? ""
  if (!/^\d{1,10}$/.test(maxAgeText)) return "max_age is missing or not a number"
  const maxAge = Math.min(Number(maxAgeText), MAX_AGE_LIMIT)
  const mx = (fields.get("mx") ?? []).map((m) => m.toLowerCase().replace(/\.$/, ""))
  if (mode !== "none" && mx.length === 0) return `a ${mode} policy names no mx`
  return { mode, mx, maxAge, text }
}

/**
 * Whether the MX host `name` is one the policy names (RFC 8461 §4.1): an exact name, or a
 * `*.example.com` pattern matching exactly one label on the left (`mail.example.com`, not
 * `example.com` nor `a.b.example.com`). Case-insensitive; a trailing dot is ignored.
 */
export const mxMatches = (patterns: ReadonlyArray<string>, name: string): boolean => {
  const host = name.toLowerCase().replace(/\.$/, "")
  return patterns.some((pattern) => {
    if (!pattern.startsWith("*.")) return pattern === host
    const dot = host.indexOf(".")
    return dot > 0 && host.slice(dot + 1) === pattern.slice(2)
  })
}
