/**
 * Contact imports (issue 19 "Contacts", import): rows from a JSON body (import-read.ts) or a CSV
 * body (csv-read.ts) are gathered by address in a worker thread (import-rows.ts) and arrive here
 * as batch texts; the invalid-percentage gate is applied to the
 * unique addresses, and the valid ones are written in one transaction with batched
 * `INSERT … ON CONFLICT`: new addresses are created, existing ones updated only with
 * `update_existing` (name replaced when given, tags added, metadata merged), else skipped.
 * With `list_ids` (lists of the key), every valid row's contact joins those lists in the same
 * transaction (bulk/lists/memberships.ts: pending on a list requiring confirmation unless
 * `confirmed`), and each new pending member's confirmation mail is queued in it too, one queue
 * write per batch of rows.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Fiber } from "effect"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { addQueued, ConfirmationMail, NOTHING_QUEUED } from "../lists/confirmation-mail.ts"
import { addMemberships, listsOfKey } from "../lists/memberships.ts"
import type { Owner } from "./Contacts.ts"
import { isStatementTimeout, QueryTooExpensive, setStatementTimeout } from "../../db/statement-timeout.ts"
import { MetadataTooLarge, refuseMetadataGrowth } from "./metadata-bound.ts"
import type { BatchSpan, GatheredImport, ImportError } from "./import-rows.ts"

export type { ImportError, ImportRow } from "./import-rows.ts"

export interface ImportOptions {
  /** Added to every imported contact's tags. */
  readonly tags: ReadonlyArray<string>
  readonly updateExisting: boolean
  /** Lists of the key every imported contact joins. */
  readonly listIds: ReadonlyArray<string>
  /** The operator holds the contacts' consent: memberships start confirmed. */
  readonly confirmed: boolean
}

export interface ImportGate {
  readonly validationMin: number
  readonly maxInvalidPct: number
  /** HERALD_LONG_QUERY_TIMEOUT_MS: each statement of the import's transaction stops after it (a MAX_JSON_MB import fits: bench/audience.ts). */
  readonly statementTimeoutMs: number
}

export interface ImportResult {
  readonly created: number
  readonly updated: number
  readonly skipped: number
  readonly invalid: number
  readonly errors: ReadonlyArray<ImportError>
  /** With list_ids: confirmation mails queued, and new pending members the 24 h window held back (confirmation-window.ts). */
  readonly confirmations_queued?: number
  readonly confirmations_withheld?: number
}

export class TooManyInvalid extends Data.TaggedError("TooManyInvalid")<{
  readonly unique: number
  readonly invalid: number
  readonly gate: ImportGate
}> {}

/** `list_ids` naming lists that are not the key's (unknown, or another key's). */
export class UnknownLists extends Data.TaggedError("UnknownLists")<{ readonly ids: ReadonlyArray<string> }> {}

/** Over the gate: at least `validationMin` unique addresses, more than `maxInvalidPct` percent of them invalid. */
export const checkGate = (rows: { readonly unique: number; readonly invalidUnique: number }, gate: ImportGate) =>
  rows.unique >= gate.validationMin && rows.invalidUnique * 100 > gate.maxInvalidPct * rows.unique
    ? Effect.fail(new TooManyInvalid({ unique: rows.unique, invalid: rows.invalidUnique, gate }))
    : Effect.void

/**
 * Writes the valid rows in one transaction; nothing when the gate refuses the import.
 * `metadataParam` names a row's metadata in a refusal (`contacts[3].metadata`, or a CSV's `metadata`).
 */
export const writeImport = (owner: Owner, rows: GatheredImport, options: ImportOptions, gate: ImportGate, metadataParam: (row: number) => string) =>
  Effect.gen(function*() {
    if (rows.oversized !== undefined) return yield* new MetadataTooLarge(rows.oversized)
    yield* checkGate(rows, gate)
    const sql = yield* SqlClient.SqlClient
    const at = new Date(yield* Clock.currentTimeMillis)
    let created = 0
    let updated = 0
    let queued = NOTHING_QUEUED
    // An import that may queue confirmation mail counts in the rate windows, before anything is written.
    yield* Effect.flatMap(ConfirmationMail, (mail) => mail.admitCall(owner, options.listIds, options.confirmed, at))
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* setStatementTimeout(sql, gate.statementTimeoutMs)
      const listIds = [...new Set(options.listIds)]
      const lists = yield* listsOfKey(owner, listIds)
      const missing = listIds.filter((id) => !lists.some((l) => l.id === id))
      if (missing.length > 0) return yield* new UnknownLists({ ids: missing })
      /** One batch's INSERT, answering how many rows it created and how many it updated. */
      const writeBatch = (json: string, { bringsMetadata }: BatchSpan) =>
        Effect.gen(function*() {
          // Only rows bringing metadata can grow a stored contact's.
          if (options.updateExisting && bringsMetadata) yield* refuseMetadataGrowth(owner, json, metadataParam)
          const [counts] = yield* sql<{ created: number; written: number }>`
            WITH written AS (
              INSERT INTO contacts (id, account_id, key_id, email, name, tags, metadata, created_at, updated_at)
              SELECT r.id, ${owner.accountId}, ${owner.keyId}, r.email, r.name, r.tags, r.metadata, ${at}, ${at}
              FROM jsonb_to_recordset(${json}::jsonb) AS r(id text, email text, name text, tags text[], metadata jsonb)
              ON CONFLICT (key_id, lower(email)) DO UPDATE SET
                name = coalesce(EXCLUDED.name, contacts.name),
                tags = contacts.tags || ARRAY(SELECT t FROM unnest(EXCLUDED.tags) AS t WHERE t <> ALL (contacts.tags)),
                metadata = contacts.metadata || EXCLUDED.metadata,
                updated_at = EXCLUDED.updated_at
              WHERE ${options.updateExisting}::boolean
              RETURNING (xmax = 0) AS created
            )
            SELECT count(*) FILTER (WHERE created)::integer AS created, count(*)::integer AS written FROM written`
          created += counts?.created ?? 0
          updated += (counts?.written ?? 0) - (counts?.created ?? 0)
          if (lists.length > 0) {
            const members = yield* sql<{ id: string }>`SELECT id FROM contacts
              WHERE key_id = ${owner.keyId}
                AND lower(email) IN (SELECT lower(r.email) FROM jsonb_to_recordset(${json}::jsonb) AS r(email text))`
            queued = addQueued(queued, yield* addMemberships(owner, lists, members.map((m) => m.id), { confirmed: options.confirmed, at }))
          }
        })
      // The next batch's text is decoded while the previous one's statement runs: one batch's
      // text at a time lives as a string, the rest stays the worker's bytes (import-rows.ts).
      const decoder = new TextDecoder()
      let running: Fiber.RuntimeFiber<void, Effect.Effect.Error<ReturnType<typeof writeBatch>>> | undefined
      for (const span of rows.batches) {
        const json = decoder.decode(rows.bytes.subarray(span.start, span.end))
        if (running !== undefined) yield* Fiber.join(running)
        running = yield* Effect.fork(writeBatch(json, span))
      }
      if (running !== undefined) yield* Fiber.join(running)
      // Last, so the account's usage row is locked only until the commit, not through the batches.
      yield* Effect.flatMap(ConfirmationMail, (mail) => mail.charge(owner, queued.quotaCount, at))
    })).pipe(Effect.catchIf((e) => isStatementTimeout(e), () =>
      Effect.fail(new QueryTooExpensive({
        param: undefined,
        message: `The import took longer than ${gate.statementTimeoutMs} ms (HERALD_LONG_QUERY_TIMEOUT_MS): split it into smaller imports; nothing was imported`,
        timeoutMs: gate.statementTimeoutMs
      }))))
    // The confirmation mail of the new pending members is committed: the MTA may take it now.
    if (queued.mailed > 0) yield* Effect.flatMap(QueueSignal, (signal) => signal.wake("herald_queue"))
    const result: ImportResult = {
      created,
      updated,
      skipped: rows.valid - created - updated,
      invalid: rows.invalidRows,
      errors: rows.errors,
      ...(options.listIds.length === 0 ? {} : { confirmations_queued: queued.mailed, confirmations_withheld: queued.withheld })
    }
    return result
  })
