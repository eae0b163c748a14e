/**
 * The metadata bound (http/bounds.ts, 32 KB as compact JSON) applied to what an import's
 * `update_existing` merge would store: `contacts.metadata || new` can only add keys, so without
 * this one contact could be grown by import after import (issue 26, finding 1: 10 MB each). A row
 * already over the bound (from before it) stays readable and may be merged with what does not
 * make it longer, but it cannot grow.
 *
 * Measured in the database, on the import's folded rows (import-staging.ts), so no stored metadata is read into the
 * appliance. PostgreSQL prints jsonb with a space after each `:` and `,` between members; those
 * outside strings are taken off, so the size is the compact JSON's, the unit of the schema's bound.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { MAX_METADATA_BYTES } from "../../http/bounds.ts"
import type { Owner } from "./Contacts.ts"

/**
 * A contact's metadata over its bound (http/bounds.ts) once the import's rows of its address are
 * merged, or once merged into the stored contact's (update_existing): the whole import is refused,
 * so one contact cannot be grown import by import. `param` names the field (`contacts[3].metadata`).
 */
export class MetadataTooLarge extends Data.TaggedError("MetadataTooLarge")<{
  readonly row: number
  readonly email: string
  readonly param: string
  readonly problem: string
}> {}

/** A JSON string token in PostgreSQL's (ARE) syntax, escapes included: removed before counting separators. */
export const STRING_TOKEN = String.raw`"(?:[^"\\]|\\.)*"`

/**
 * Fails with the first of the import's folded rows (`import_folded`: `source_row`, `email`,
 * `metadata`) whose merge into the key's stored contact would be over the bound and longer than
 * what is stored. Runs in the import's transaction, before any row is written.
 */
export const refuseMetadataGrowth = (owner: Owner, paramOf: (row: number) => string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [over] = yield* sql<{ row: number; email: string; bytes: number }>`
      SELECT r.source_row AS row, r.email, m.bytes
      FROM import_folded r
      JOIN contacts c ON c.key_id = ${owner.keyId} AND lower(c.email) = lower(r.email)
      CROSS JOIN LATERAL (SELECT (c.metadata || r.metadata)::text AS merged) t
      CROSS JOIN LATERAL (SELECT regexp_replace(t.merged, ${STRING_TOKEN}, '', 'g') AS bare) b
      CROSS JOIN LATERAL (SELECT octet_length(t.merged)
        - (length(b.bare) - length(replace(replace(b.bare, ', ', ','), ': ', ':'))) AS bytes) m
      WHERE r.metadata <> '{}'::jsonb
        AND octet_length(t.merged) > ${MAX_METADATA_BYTES}
        AND octet_length(t.merged) > octet_length(c.metadata::text)
        AND m.bytes > ${MAX_METADATA_BYTES}
      ORDER BY r.source_row
      LIMIT 1`
    if (over === undefined) return
    return yield* new MetadataTooLarge({
      row: over.row,
      email: over.email,
      param: paramOf(over.row),
      problem: `must be at most ${MAX_METADATA_BYTES} bytes as JSON (${over.bytes} once merged into the stored contact's)`
    })
  })
