/**
 * Contact imports (issue 19 "Contacts", import): rows from a JSON body (import-read.ts) or a CSV
 * body (csv-read.ts) are read in a worker thread and copied, as they are read, into the import's
 * staging table (import-staging.ts), all in one transaction; repeated addresses are folded there
 * in SQL, the invalid-percentage gate is applied to the unique addresses, and the valid ones are
 * written with batched `INSERT … SELECT … ON CONFLICT`: new addresses are created, existing ones
 * updated only with `update_existing` (name replaced when given, tags added, metadata merged), else skipped.
 * With `list_ids` (lists of the key), every valid row's contact joins those lists in the same
 * transaction (bulk/lists/memberships.ts: pending on a list requiring confirmation unless
 * `confirmed`), and each new pending member's confirmation mail is queued in it too, one queue
 * write per batch of rows.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { addQueued, ConfirmationMail, NOTHING_QUEUED } from "../lists/confirmation-mail.ts"
import { addMemberships, listsOfKey } from "../lists/memberships.ts"
import type { Owner } from "./Contacts.ts"
import { isStatementTimeout, QueryTooExpensive, setStatementTimeout } from "../../db/statement-timeout.ts"
import { MetadataTooLarge, refuseMetadataGrowth } from "./metadata-bound.ts"
import type { ImportRejected, OnChunk } from "./csv-reader.ts"
import type { ImportError, StagedImport } from "./import-rows.ts"
import { firstOversized, foldOverBound, foldStaging, stageImport } from "./import-staging.ts"

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

/** Folded rows of one INSERT statement (and of one membership write). */
const WRITE_BATCH = 5_000

/** The import's answer but for the parts that come after its transaction. */
interface Written {
  readonly created: number
  readonly updated: number
  readonly valid: number
  readonly queued: ReturnType<typeof addQueued>
}

/**
 * Reads an import with `read` (the reader worker, whose chunks of rows go to the staging table as
 * they come) and writes it in one transaction; nothing when anything refuses it. `optionsOf` takes
 * the options from what the reader answered (a JSON body names its own). `metadataParam` names a
 * row's metadata in a refusal (`contacts[3].metadata`, or a CSV's `metadata`).
 */
export const importContacts = <R extends { readonly staged: StagedImport }>(
  owner: Owner,
  read: (onChunk: OnChunk) => Effect.Effect<R, ImportRejected>,
  optionsOf: (read: R) => ImportOptions,
  gate: ImportGate,
  metadataParam: (row: number) => string
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const at = new Date(yield* Clock.currentTimeMillis)
    let options: ImportOptions | undefined
    let staged: StagedImport | undefined
    const written = yield* stageImport(read, setStatementTimeout(sql, gate.statementTimeoutMs), (result: R) => {
      options = optionsOf(result)
      staged = result.staged
      return writeStaged(owner, result.staged, options, gate, metadataParam, at)
    }).pipe(Effect.catchIf((e) => isStatementTimeout(e), () =>
      Effect.fail(new QueryTooExpensive({
        param: undefined,
        message: `The import took longer than ${gate.statementTimeoutMs} ms (HERALD_LONG_QUERY_TIMEOUT_MS): split it into smaller imports; nothing was imported`,
        timeoutMs: gate.statementTimeoutMs
      }))))
    // The confirmation mail of the new pending members is committed: the MTA may take it now.
    if (written.queued.mailed > 0) yield* Effect.flatMap(QueueSignal, (signal) => signal.wake("herald_queue"))
    const result: ImportResult = {
      created: written.created,
      updated: written.updated,
      skipped: written.valid - written.created - written.updated,
      invalid: staged!.invalidRows,
      errors: staged!.errors,
      ...(options!.listIds.length === 0 ? {} : { confirmations_queued: written.queued.mailed, confirmations_withheld: written.queued.withheld })
    }
    return result
  })

/**
 * In the import's transaction, its rows staged: the fold, the bounds and the gate (each refusal
 * rolls everything back), then the writes, batch by batch of the folded rows.
 */
const writeStaged = (owner: Owner, staged: StagedImport, options: ImportOptions, gate: ImportGate, metadataParam: (row: number) => string, at: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const valid = yield* foldStaging(staged.extraTags)
    const oversized = firstOversized(staged, yield* foldOverBound(metadataParam))
    if (oversized !== undefined) return yield* new MetadataTooLarge(oversized)
    yield* checkGate({ unique: valid + staged.invalidUnique, invalidUnique: staged.invalidUnique }, gate)
    // An import that may queue confirmation mail counts in the rate windows, before anything is written.
    yield* Effect.flatMap(ConfirmationMail, (mail) => mail.admitCall(owner, options.listIds, options.confirmed, at))
    const listIds = [...new Set(options.listIds)]
    const lists = yield* listsOfKey(owner, listIds)
    const missing = listIds.filter((id) => !lists.some((l) => l.id === id))
    if (missing.length > 0) return yield* new UnknownLists({ ids: missing })
    // Only rows bringing metadata can grow a stored contact's.
    if (options.updateExisting) yield* refuseMetadataGrowth(owner, metadataParam)
    let created = 0
    let updated = 0
    let queued = NOTHING_QUEUED
    for (let after = 0; after < valid; after += WRITE_BATCH) {
      const [counts] = yield* sql<{ created: number; written: number }>`
        WITH written AS (
          INSERT INTO contacts (id, account_id, key_id, email, name, tags, metadata, created_at, updated_at)
          SELECT r.id, ${owner.accountId}, ${owner.keyId}, r.email, r.name, r.tags, r.metadata, ${at}, ${at}
          FROM import_folded r WHERE r.seq > ${after} AND r.seq <= ${after + WRITE_BATCH}
          ORDER BY r.seq
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
        const members = yield* sql<{ id: string }>`SELECT c.id FROM contacts c
          WHERE c.key_id = ${owner.keyId}
            AND lower(c.email) IN (SELECT lower(r.email) FROM import_folded r WHERE r.seq > ${after} AND r.seq <= ${after + WRITE_BATCH})`
        queued = addQueued(queued, yield* addMemberships(owner, lists, members.map((m) => m.id), { confirmed: options.confirmed, at }))
      }
    }
    // Last, so the account's usage row is locked only until the commit, not through the batches.
    yield* Effect.flatMap(ConfirmationMail, (mail) => mail.charge(owner, queued.quotaCount, at))
    const written: Written = { created, updated, valid, queued }
    return written
  })
