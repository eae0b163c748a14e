/**
 * What DNS holds for each record a domain should publish: `verified` (a record there matches),
 * `mismatch` (a record of that kind is there, with another value: `found` says what) or `missing`.
 * Only records of the same kind count as a mismatch (a `v=spf1` record for SPF, a
 * `herald-verification=` token for verification): the apex holds unrelated TXT records too.
 */
import { Effect } from "effect"
import type { DnsResolver } from "../../lib/dns.ts"
import type { CheckedDnsRecord, DnsRecord } from "./Api.ts"

export type CheckedRecord = typeof CheckedDnsRecord.Type
export type RecordStatus = CheckedRecord["status"]

/** A lookup failed (timeout, SERVFAIL): nothing can be said about the record. */
export interface LookupFailure {
  readonly name: string
  readonly code: string
}

const collapse = (value: string) => value.trim().replace(/\s+/g, " ").toLowerCase()
const withoutDot = (host: string) => host.toLowerCase().replace(/\.$/, "")

/** The `p=` tag of a DKIM key record, without the spaces a long TXT value is often split with. */
const dkimKey = (value: string) => {
  const tag = value.split(";").map((t) => t.trim()).find((t) => /^p\s*=/i.test(t))
  return tag === undefined ? undefined : tag.replace(/^p\s*=/i, "").replace(/\s+/g, "")
}

interface Judge {
  /** The found values that are meant as this record. */
  readonly ofKind: (found: string) => boolean
  readonly matches: (found: string) => boolean
}

const judgeOf = (record: DnsRecord): Judge => {
  switch (record.purpose) {
    case "verification":
      return { ofKind: (f) => f.trim().startsWith("herald-verification="), matches: (f) => f.trim() === record.value }
    case "dkim":
      return { ofKind: () => true, matches: (f) => dkimKey(f) !== undefined && dkimKey(f) === dkimKey(record.value) }
    case "spf":
      return { ofKind: (f) => /^v=spf1(\s|$)/i.test(f.trim()), matches: (f) => collapse(f) === collapse(record.value) }
    case "dmarc":
      // A suggestion: any DMARC policy the domain publishes is the owner's choice, and fine.
      return { ofKind: (f) => /^v=dmarc1\s*(;|$)/i.test(f.trim()), matches: () => true }
    case "return_path": {
      const target = withoutDot(record.value.split(" ")[1] ?? "")
      return { ofKind: () => true, matches: (f) => withoutDot(f.split(" ")[1] ?? "") === target }
    }
  }
}

export const checkRecord = (record: DnsRecord, found: ReadonlyArray<string>): CheckedRecord => {
  const judge = judgeOf(record)
  const relevant = found.filter(judge.ofKind)
  const status: RecordStatus = relevant.some(judge.matches) ? "verified" : relevant.length > 0 ? "mismatch" : "missing"
  return { ...record, status, found: relevant }
}

/** The values at a record's name: TXT strings, or MX as `preference exchange` (no trailing dot). */
const lookupValues = (dns: DnsResolver, record: DnsRecord): Effect.Effect<ReadonlyArray<string>, LookupFailure> => {
  const looked = record.type === "MX"
    ? Effect.map(dns.mx(record.name), (mx) => mx.map((r) => `${r.priority} ${withoutDot(r.exchange)}`))
    : dns.txt(record.name)
  return looked.pipe(
    Effect.catchTags({
      DnsNoRecord: () => Effect.succeed([] as ReadonlyArray<string>),
      DnsFailure: (e) => Effect.fail({ name: e.name, code: e.code })
    })
  )
}

/** Looks every record up (at once) and judges it; the first failed lookup fails the whole check. */
export const checkRecords = (dns: DnsResolver, records: ReadonlyArray<DnsRecord>) =>
  Effect.forEach(records, (record) => Effect.map(lookupValues(dns, record), (found) => checkRecord(record, found)), {
    concurrency: "unbounded"
  })

/** Ready to send well: verified, signing (DKIM) and receiving its bounces (return-path MX). */
export const isReady = (records: ReadonlyArray<CheckedRecord>) =>
  (["verification", "dkim", "return_path"] as const).every((purpose) =>
    records.some((r) => r.purpose === purpose && r.status === "verified")
  )
