/**
 * Contact imports (issue 19 "Contacts", import): rows from a JSON body or a streamed CSV body are
 * gathered by address (compared case-insensitively; a repeated address folds into its first row),
 * invalid rows are counted and reported, the invalid-percentage gate is applied to the unique
 * addresses, and the valid ones are written in one transaction with batched
 * `INSERT … ON CONFLICT`: new addresses are created, existing ones updated only with
 * `update_existing` (name replaced when given, tags added, metadata merged), else skipped.
 * With `list_ids` (lists of the key), every valid row's contact joins those lists in the same
 * transaction (bulk/lists/memberships.ts: pending on a list requiring confirmation unless
 * `confirmed`), and each new pending member's confirmation mail is queued in it too, one queue
 * write per batch of rows.
 */
import type { Readable } from "node:stream"
import { SqlClient } from "@effect/sql"
import { parse } from "csv-parse"
import { Clock, Data, Effect, Fiber } from "effect"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { newId } from "../../lib/ids.ts"
import { isEmailAddress } from "../../lib/email.ts"
import { isStorableText } from "../../lib/text.ts"
import { addQueued, ConfirmationMail, NOTHING_QUEUED } from "../lists/confirmation-mail.ts"
import { addMemberships, listsOfKey } from "../lists/memberships.ts"
import { cleanTags, type Owner } from "./Contacts.ts"
import { isStatementTimeout, QueryTooExpensive, setStatementTimeout } from "../../db/statement-timeout.ts"

export interface ImportRow {
  readonly email: string
  readonly name?: string | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

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

export interface ImportError {
  readonly row: number
  readonly email: string
  readonly reason: string
}

export interface ImportResult {
  readonly created: number
  readonly updated: number
  readonly skipped: number
  readonly invalid: number
  readonly errors: ReadonlyArray<ImportError>
}

export class TooManyInvalid extends Data.TaggedError("TooManyInvalid")<{
  readonly unique: number
  readonly invalid: number
  readonly gate: ImportGate
}> {}

/** `list_ids` naming lists that are not the key's (unknown, or another key's). */
export class UnknownLists extends Data.TaggedError("UnknownLists")<{ readonly ids: ReadonlyArray<string> }> {}

/** A CSV body that cannot be read as CSV, or is over MAX_JSON_MB while streamed. */
export class CsvRejected extends Data.TaggedError("CsvRejected")<{ readonly tooLarge: boolean; readonly message: string }> {}

const MAX_ERRORS = 100
const BATCH = 2000

/**
 * Every string of a metadata value, keys included, can be stored (lib/text.ts): jsonb refuses NUL
 * and unpaired surrogates. Walked rather than serialised: it runs once per imported row.
 */
const isStorableValue = (value: unknown): boolean => {
  if (typeof value === "string") return isStorableText(value)
  if (Array.isArray(value)) return value.every(isStorableValue)
  if (typeof value === "object" && value !== null) {
    for (const key in value) {
      if (!isStorableText(key) || !isStorableValue((value as Record<string, unknown>)[key])) return false
    }
  }
  return true
}

/** The rows of one import, gathered by address as they arrive (one copy: the parsed rows). */
export class ImportRows {
  readonly valid = new Map<string, { email: string; name: string | null; tags: Array<string>; metadata: Readonly<Record<string, unknown>> }>()
  readonly invalidAddresses = new Set<string>()
  readonly errors: Array<ImportError> = []
  invalidRows = 0
  received = 0

  add(input: ImportRow) {
    const row = ++this.received
    const email = input.email.trim()
    const address = email.toLowerCase()
    const unstorable = !isStorableText(input.name ?? "") || !isStorableValue(input.metadata ?? {})
    if (!isEmailAddress(email) || unstorable) {
      this.invalidRows++
      this.invalidAddresses.add(address)
      if (this.errors.length < MAX_ERRORS) {
        const reason = email === "" ? "missing email" : unstorable ? "name or metadata holds NUL or unpaired surrogate characters" : "invalid email syntax"
        this.errors.push({ row, email, reason })
      }
      return
    }
    const seen = this.valid.get(address)
    const tags = cleanTags(input.tags ?? [])
    if (seen === undefined) {
      // The row's metadata is kept as given (not copied): a later row of the address merges into a copy.
      this.valid.set(address, { email, name: input.name ?? null, tags, metadata: input.metadata ?? {} })
    } else {
      if (input.name !== undefined && input.name !== null) seen.name = input.name
      seen.tags = cleanTags([...seen.tags, ...tags])
      seen.metadata = { ...seen.metadata, ...input.metadata }
    }
  }

  get unique() {
    return this.valid.size + this.invalidAddresses.size
  }
}

/** Over the gate: at least `validationMin` unique addresses, more than `maxInvalidPct` percent of them invalid. */
export const checkGate = (rows: ImportRows, gate: ImportGate) =>
  rows.unique >= gate.validationMin && rows.invalidAddresses.size * 100 > gate.maxInvalidPct * rows.unique
    ? Effect.fail(new TooManyInvalid({ unique: rows.unique, invalid: rows.invalidAddresses.size, gate }))
    : Effect.void

/** Writes the valid rows in one transaction; nothing when the gate refuses the import. */
export const writeImport = (owner: Owner, rows: ImportRows, options: ImportOptions, gate: ImportGate) =>
  Effect.gen(function*() {
    yield* checkGate(rows, gate)
    const sql = yield* SqlClient.SqlClient
    const at = new Date(yield* Clock.currentTimeMillis)
    const extraTags = cleanTags(options.tags)
    const all = [...rows.valid.values()]
    let created = 0
    let updated = 0
    let queued = NOTHING_QUEUED
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* setStatementTimeout(sql, gate.statementTimeoutMs)
      const listIds = [...new Set(options.listIds)]
      const lists = yield* listsOfKey(owner, listIds)
      const missing = listIds.filter((id) => !lists.some((l) => l.id === id))
      if (missing.length > 0) return yield* new UnknownLists({ ids: missing })
      /** One batch's INSERT, answering how many rows it created and how many it updated. */
      const writeBatch = (batch: ReadonlyArray<ImportRow>, json: string) =>
        Effect.gen(function*() {
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
              WHERE key_id = ${owner.keyId} AND lower(email) = ANY(${batch.map((r) => r.email.toLowerCase())})`
            queued = addQueued(queued, yield* addMemberships(owner, lists, members.map((m) => m.id), { confirmed: options.confirmed, at }))
          }
        })
      // The next batch is built (ids, tags, its JSON text) while the previous one's statement runs:
      // the appliance's share of the work overlaps the database's instead of adding to it.
      let running: Fiber.RuntimeFiber<void, Effect.Effect.Error<ReturnType<typeof writeBatch>>> | undefined
      for (let start = 0; start < all.length; start += BATCH) {
        const batch = all.slice(start, start + BATCH)
        const json = JSON.stringify(batch.map((r) => ({
          id: newId("ct"),
          email: r.email,
          name: r.name,
          tags: extraTags.length === 0 ? r.tags : cleanTags([...r.tags, ...extraTags]),
          metadata: r.metadata
        })))
        if (running !== undefined) yield* Fiber.join(running)
        running = yield* Effect.fork(writeBatch(batch, json))
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
      skipped: all.length - created - updated,
      invalid: rows.invalidRows,
      errors: rows.errors
    }
    return result
  })

/**
 * What each CSV column holds, read once from the header row: email, name and tags are recognised
 * in any case; every other named column is a metadata key as written.
 */
const csvColumns = (header: ReadonlyArray<string>) =>
  header.map((column) => {
    const key = column.trim()
    const lower = key.toLowerCase()
    return lower === "email" || lower === "name" || lower === "tags" ? lower : key === "" ? null : { metadata: key }
  })

const csvRow = (columns: ReturnType<typeof csvColumns>, record: ReadonlyArray<string>): ImportRow => {
  let email = ""
  let name: string | null = null
  let tags: Array<string> = []
  const metadata: Record<string, unknown> = {}
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]
    const value = record[i] ?? ""
    if (column === "email") email = value
    else if (column === "name") name = value.trim() === "" ? null : value.trim()
    else if (column === "tags") tags = value.split(";")
    else if (column != null && value !== "") metadata[column.metadata] = value
  }
  return { email, name, tags, metadata }
}

/**
 * Streams a CSV body through csv-parse into `rows`, within `maxBytes`. Past the limit the rest of
 * the body is read and dropped (not destroyed: the client gets its 413 on a usable connection).
 */
export const readCsv = (source: Readable, maxBytes: number, rows: ImportRows) =>
  Effect.async<void, CsvRejected>((resume) => {
    const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: true })
    let columns: ReturnType<typeof csvColumns> | null = null
    let size = 0
    let done = false
    const finish = (result: Effect.Effect<void, CsvRejected>) => {
      if (done) return
      done = true
      source.resume()
      resume(result)
    }
    parser.on("readable", () => {
      let record: Array<string> | null
      while (!done && (record = parser.read()) !== null) {
        if (columns === null) {
          columns = csvColumns(record)
          if (!columns.includes("email")) {
            finish(Effect.fail(new CsvRejected({ tooLarge: false, message: "The CSV header row has no email column" })))
          }
        } else {
          rows.add(csvRow(columns, record))
        }
      }
    })
    parser.on("error", (error) => finish(Effect.fail(new CsvRejected({ tooLarge: false, message: `Invalid CSV: ${error.message}` }))))
    parser.on("end", () => {
      if (columns === null) finish(Effect.fail(new CsvRejected({ tooLarge: false, message: "The CSV body is empty: a header row with an email column is required" })))
      else finish(Effect.void)
    })
    source.on("data", (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > maxBytes) {
        finish(Effect.fail(new CsvRejected({ tooLarge: true, message: `The request body is over the limit of ${maxBytes} bytes (MAX_JSON_MB)` })))
        return
      }
      if (!parser.write(chunk)) {
        source.pause()
        parser.once("drain", () => done || source.resume())
      }
    })
    source.once("end", () => done || parser.end())
    source.once("error", (error) => finish(Effect.fail(new CsvRejected({ tooLarge: false, message: `The request body could not be read: ${error.message}` }))))
  })
