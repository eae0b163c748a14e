/**
 * An import's staging tables, in the import's own transaction (import.ts): the rows arrive from the
 * reader worker in chunks of COPY text (import-rows.ts) and are copied into `import_staging` as
 * they are read, so neither thread holds the import; repeated addresses are then folded into
 * `import_folded` in SQL, with exactly the rules the worker used to apply (first row's id, address
 * and position; the last name given; tags in order of first appearance, the request's last; metadata
 * merged key by key, later rows winning), and the fold is held to the metadata bound. Both are TEMP
 * tables dropped at the transaction's end, commit or rollback: a failed or stopped import leaves
 * nothing, and a crashed session takes them along.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Queue } from "effect"
import { copyIn } from "../../db/copy-in.ts"
import { MAX_METADATA_BYTES } from "../../http/bounds.ts"
import type { ImportRejected, OnChunk } from "./csv-reader.ts"
import type { OversizedRow, StagedImport } from "./import-rows.ts"
import { STAGED_COLUMNS } from "./import-rows.ts"
import { STRING_TOKEN } from "./metadata-bound.ts"

type Arrival<R> =
  | { readonly _tag: "chunk"; readonly text: Uint8Array; readonly copied: () => void }
  | { readonly _tag: "end"; readonly exit: Exit.Exit<R, ImportRejected> }

/**
 * Reads an import with `read` (the reader worker: each chunk of rows to `onChunk`), copying its rows
 * into `import_staging` as they come, then runs `write` with what the reader answered — all in one
 * transaction (`begin`: statements to run first in it, e.g. its timeout). No connection is taken
 * before the first chunk (or the reader's answer) arrives: a body waiting for a reader waits
 * without one. A body the reader refuses before any row fails here, with no transaction at all.
 */
export const stageImport = <R, A, E, Q>(
  read: (onChunk: OnChunk) => Effect.Effect<R, ImportRejected>,
  begin: Effect.Effect<void, SqlError>,
  write: (read: R) => Effect.Effect<A, E, Q>
): Effect.Effect<A, E | ImportRejected | SqlError, Q | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Unbounded, yet never more than one chunk: the worker waits for each chunk's `copied`.
    const arrivals = yield* Queue.unbounded<Arrival<R>>()
    // A child: when this import ends (or fails), the read is interrupted and its worker let go.
    yield* Effect.fork(
      read((text, copied) => void Queue.unsafeOffer(arrivals, { _tag: "chunk", text, copied })).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Queue.offer(arrivals, { _tag: "end", exit }))
      )
    )
    const first = yield* Queue.take(arrivals)
    if (first._tag === "end" && Exit.isFailure(first.exit)) return yield* Effect.failCause(first.exit.cause)
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* begin
      yield* sql`CREATE TEMP TABLE import_staging (
        source_row integer NOT NULL, id text NOT NULL, email text NOT NULL, address text NOT NULL,
        name text, tags text[] NOT NULL, metadata jsonb NOT NULL) ON COMMIT DROP`
      let arrival = first
      while (arrival._tag === "chunk") {
        yield* copyIn(`import_staging (${STAGED_COLUMNS})`, arrival.text)
        arrival.copied()
        arrival = yield* Queue.take(arrivals)
      }
      return yield* write(yield* arrival.exit)
    }))
  })

/**
 * Folds `import_staging` by address into `import_folded` (`seq`: 1.. in order of first appearance),
 * `extraTags` being the request's tags every staged row carries. Answers the valid unique addresses.
 */
export const foldStaging = (extraTags: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TEMP TABLE import_folded ON COMMIT DROP AS
      SELECT row_number() OVER (ORDER BY s.source_row)::integer AS seq,
             s.source_row, s.id, s.email, s.address, s.name, s.tags, s.metadata, g.n
      FROM (SELECT address, min(source_row) AS first_row, count(*)::integer AS n FROM import_staging GROUP BY address) g
      JOIN import_staging s ON s.source_row = g.first_row`
    yield* sql`CREATE INDEX ON import_folded (seq)`
    const [counts] = yield* sql<{ valid: number; most: number }>`
      SELECT count(*)::integer AS valid, coalesce(max(n), 0)::integer AS most FROM import_folded`
    if ((counts?.most ?? 0) > 1) yield* foldRepeats(extraTags)
    return counts?.valid ?? 0
  })

/**
 * The rows of a repeated address merged into its first: the last name given; the tags of every
 * row in order of first appearance with the request's last (a request tag keeps its place only in
 * the last row, as the rows' running merge put it back at the end after each earlier one); the
 * metadata merged key by key in row order. A tag's place is its row and position in one bigint
 * (a row's tags fit far under 2^20: a CSV line is at most 128 KB).
 */
const foldRepeats = (extraTags: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`WITH repeated AS (
        SELECT s.source_row, s.address, s.name, s.tags, s.metadata, max(s.source_row) OVER (PARTITION BY s.address) AS last_row
        FROM import_staging s JOIN import_folded f ON f.address = s.address AND f.n > 1
      ), tag_places AS (
        SELECT r.address, u.t, min(r.source_row::bigint * 1048576 + u.p) AS place
        FROM repeated r CROSS JOIN LATERAL unnest(r.tags) WITH ORDINALITY AS u(t, p)
        WHERE r.source_row = r.last_row OR u.t <> ALL (${[...extraTags]}::text[])
        GROUP BY r.address, u.t
      ), tags AS (
        SELECT address, array_agg(t ORDER BY place) AS tags FROM tag_places GROUP BY address
      ), names AS (
        SELECT address, (array_agg(name ORDER BY source_row DESC) FILTER (WHERE name IS NOT NULL))[1] AS name
        FROM repeated GROUP BY address
      ), merged AS (
        SELECT r.address, jsonb_object_agg(e.key, e.value ORDER BY r.source_row) AS metadata
        FROM repeated r CROSS JOIN LATERAL jsonb_each(r.metadata) AS e GROUP BY r.address
      )
      UPDATE import_folded f SET name = n.name, tags = coalesce(t.tags, '{}'), metadata = coalesce(m.metadata, '{}'::jsonb)
      FROM names n LEFT JOIN tags t ON t.address = n.address LEFT JOIN merged m ON m.address = n.address
      WHERE f.address = n.address`)

/**
 * The first row at which a repeated address's merged metadata went over its bound (as the rows'
 * running merge met it), or undefined. Only addresses whose whole merge is over are walked row by
 * row: the running merge of one address costs its rows times its size, which only a refused import
 * pays. Sizes are of the compact JSON (metadata-bound.ts), from PostgreSQL's spaced text.
 */
export const foldOverBound = (paramOf: (row: number) => string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [over] = yield* sql<{ row: number; email: string; bytes: number }>`
      WITH over AS (
        SELECT f.address FROM import_folded f
        CROSS JOIN LATERAL (SELECT f.metadata::text AS merged) t
        CROSS JOIN LATERAL (SELECT regexp_replace(t.merged, ${STRING_TOKEN}, '', 'g') AS bare) b
        WHERE f.n > 1 AND octet_length(t.merged) > ${MAX_METADATA_BYTES}
          AND octet_length(t.merged) - (length(b.bare) - length(replace(replace(b.bare, ', ', ','), ': ', ':'))) > ${MAX_METADATA_BYTES}
      ), running AS (
        SELECT p.source_row, p.email,
               (jsonb_object_agg(p.key, p.value) OVER (PARTITION BY p.address ORDER BY p.source_row))::text AS merged
        FROM (SELECT s.source_row, s.email, s.address, e.key, e.value
              FROM import_staging s JOIN over o ON o.address = s.address CROSS JOIN LATERAL jsonb_each(s.metadata) AS e) p
      )
      SELECT r.source_row AS row, r.email, m.bytes
      FROM running r
      CROSS JOIN LATERAL (SELECT regexp_replace(r.merged, ${STRING_TOKEN}, '', 'g') AS bare) b
      CROSS JOIN LATERAL (SELECT octet_length(r.merged)
        - (length(b.bare) - length(replace(replace(b.bare, ', ', ','), ': ', ':'))) AS bytes) m
      WHERE octet_length(r.merged) > ${MAX_METADATA_BYTES} AND m.bytes > ${MAX_METADATA_BYTES}
      ORDER BY r.source_row
      LIMIT 1`
    if (over === undefined) return undefined
    const row: OversizedRow = {
      row: over.row,
      email: over.email,
      param: paramOf(over.row),
      problem: `must be at most ${MAX_METADATA_BYTES} bytes as JSON (${over.bytes} once merged)`
    }
    return row
  })

/** The first row over the bound: a row by itself (found as it was read) or a fold. */
export const firstOversized = (staged: StagedImport, fold: OversizedRow | undefined) =>
  staged.oversized === undefined ? fold : fold === undefined || staged.oversized.row <= fold.row ? staged.oversized : fold
