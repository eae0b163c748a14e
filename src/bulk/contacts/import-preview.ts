/**
 * POST /v1/bulk/contacts/import-preview: what an import of these addresses would meet, touching
 * nothing — the addresses already contacts of the key, the counts the import's gate reads, and the
 * invalid rows by position (the first MAX_REPORTED_INVALID, with the import's own reasons,
 * import-rows.ts `invalidReason`), so the console can show which rows an import would leave out.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import type { Owner } from "./Contacts.ts"
import type { ImportGate } from "./import.ts"
import { invalidReason, MAX_REPORTED_INVALID } from "./import-rows.ts"

export interface InvalidRow {
  /** 0-based position in the submitted rows. */
  readonly index: number
  readonly email: string
  readonly reason: string
}

/** The first MAX_REPORTED_INVALID rows the import would refuse, in submitted order. */
export const invalidRows = (emails: ReadonlyArray<string>): ReadonlyArray<InvalidRow> => {
  const invalid: Array<InvalidRow> = []
  for (let index = 0; index < emails.length && invalid.length < MAX_REPORTED_INVALID; index++) {
    const email = emails[index]!.trim()
    const reason = invalidReason(email)
    if (reason !== undefined) invalid.push({ index, email, reason })
  }
  return invalid
}

export const previewImport = (owner: Owner, emails: ReadonlyArray<string>, gate: ImportGate, timeoutMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const unique = new Set(emails.map((e) => e.trim().toLowerCase()))
    const invalidUnique = [...unique].filter((address) => invalidReason(address) !== undefined).length
    const existing = unique.size === 0 ? [] : yield* sql<{ email: string }>`
      SELECT email FROM contacts WHERE key_id = ${owner.keyId} AND lower(email) = ANY(${[...unique]}) ORDER BY lower(email)`.pipe(
        withStatementTimeout(sql, timeoutMs, {
          param: "emails",
          message: `Looking the addresses up took longer than ${timeoutMs} ms: preview fewer at a time`
        })
      )
    return {
      existing: existing.map((r) => r.email),
      total_unique: unique.size,
      total_received: emails.length,
      invalid_syntax: invalidUnique,
      invalid: invalidRows(emails),
      validation_min: gate.validationMin,
      max_invalid_pct: gate.maxInvalidPct
    }
  })
