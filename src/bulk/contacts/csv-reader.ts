/**
 * The contact import's CSV reader: a small pool of worker threads (src/lib/worker-pool.ts) running
 * csv-worker.ts, so that reading a CSV body — csv-parse is a few seconds of CPU for a MAX_JSON_MB
 * body — never holds the main thread, and a body that takes longer than
 * HERALD_IMPORT_PARSE_TIMEOUT_S ends with its worker terminated, not with a check between steps.
 *
 * The pool starts at the first import, not with the appliance: most appliances never import, and each worker is a thread with its own heap. Every read goes through `read`, which takes
 * the account: the place where one account's share of the workers is decided.
 *
 * A read hands its rows over as it goes (chunks of COPY text for the import's staging table,
 * import-staging.ts), and its worker waits for each chunk's copy: the deadline counts the worker's
 * own time, not the database's (each COPY has the import's statement timeout).
 */
import { Data, Duration, Effect, Scope } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { makeWorkerPool, type WorkerTaskError } from "../../lib/worker-pool.ts"
import { type CsvReadLimits, type CsvReadResult, readCsv } from "./csv-read.ts"
import { type JsonImportResult, readJsonImport } from "./import-read.ts"
import { chunkCopied, importTask, isJsonImport, stopImport, taskOf } from "./import-task.ts"

/** Columns of a CSV import's header row: far more than any export of a contact list carries. */
export const MAX_CSV_COLUMNS = 1_000

/**
 * Bytes of one CSV record (the header, or one contact with its quoted line breaks): a contact at
 * every bound of its fields (address, name, 100 tags of 100 characters, metadata) fits many times.
 */
export const MAX_CSV_LINE_BYTES = 128 * 1024

/**
 * Non-empty cells one CSV import may hold, per byte of MAX_JSON_MB: one per 4 bytes admits any
 * real export (a cell and its comma are rarely under 4 bytes on average) and bounds what the main
 * thread builds from a body whose metadata keys are written once, in its header.
 */
export const CSV_BYTES_PER_VALUE = 4

/**
 * A worker's V8 old generation: the body, csv-parse's state and the rows' JSON texts. A small limit
 * makes the worker collect as it goes instead of growing beside the main thread's rows: at 256 MB
 * the 15 MiB `bench:audience` import grew the process by +173–190 MB, at 64 MB by +140–147 MB
 * (import alone, no database). The worst body the caps admit (15 MiB, 3,930 rows × 997 cells, at
 * the cell cap) reads at 64 MB and also at 44 MB; 32 MB does not even load the worker under tsx.
 * A JSON body needs more: its parsed tree and the decoded contacts live together for a moment, and a
 * 10 MB import of 60,000 contacts ran a 96 MB worker out of memory, while 128 MB read it and a
 * 15 MiB (MAX_JSON_MB) one. So 128: a worker grows that far only for such a body.
 */
const WORKER_MEMORY_MB = 128

const IMPORT_WORKER = new URL("./import-worker.ts", import.meta.url)

/** A chunk of an import's staged rows as COPY text, and what to call once it is copied (the worker waits until then). */
export type OnChunk = (chunk: Uint8Array, copied: () => void) => void

/** The import body could not be read: `reason` decides the answer (Http.ts). */
export class ImportRejected extends Data.TaggedError("ImportRejected")<{
  /**
   * `invalid` 400 validation_failed, `invalid_json` / `json_too_complex` 400 with that code, `size`
   * 413 (the body or what it holds), `busy` 429 (every reader taken), `unavailable`: the pool is shut down.
   */
  readonly reason: "invalid" | "invalid_json" | "json_too_complex" | "size" | "busy" | "unavailable"
  readonly message: string
  readonly param?: string | undefined
}> {}

export const csvReadLimits = (maxJsonBytes: number): CsvReadLimits => ({
  maxColumns: MAX_CSV_COLUMNS,
  maxLineBytes: MAX_CSV_LINE_BYTES,
  maxValues: Math.floor(maxJsonBytes / CSV_BYTES_PER_VALUE)
})

/** A task's failure in the pool as the import's refusal. */
const rejected = (error: WorkerTaskError, timeoutMs: number, what: "CSV" | "JSON body"): ImportRejected => {
  switch (error.reason) {
    case "timeout":
      return new ImportRejected({
        reason: "invalid",
        message: `The ${what} could not be read within ${timeoutMs / 1000} s (HERALD_IMPORT_PARSE_TIMEOUT_S): split it into smaller imports`
      })
    case "memory":
      return new ImportRejected({ reason: "size", message: `The ${what} needed more than ${WORKER_MEMORY_MB} MB to read: split it into smaller imports` })
    case "failed":
    case "crashed":
      return new ImportRejected({ reason: "invalid", message: `The ${what} could not be read: ${error.message}` })
    case "busy":
      return new ImportRejected({ reason: "busy", message: "Every import reader is taken and others wait already: try again in a few seconds" })
    case "shutdown":
      return new ImportRejected({ reason: "unavailable", message: "The appliance is shutting down" })
  }
}

/** The import reader (CSV and JSON bodies; its name kept from when it read CSV alone). */
export class CsvReader extends Effect.Service<CsvReader>()("herald/CsvReader", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const limits = csvReadLimits(config.maxJsonBytes)
    const timeoutMs = config.importParseTimeoutMs
    const scope = yield* Effect.scope
    // Made once, at the first read, and closed with the appliance (its workers terminated).
    const pool = yield* Effect.cached(Scope.extend(
      makeWorkerPool<CsvReadResult | JsonImportResult>({
        name: "Contact import reader",
        file: IMPORT_WORKER,
        size: config.importWorkers,
        // One body per worker: a second one queued behind a body that runs to its deadline would wait
        // that long, then fail with it when the worker is replaced.
        pipeline: 1,
        // Each waiting body is held in memory (up to MAX_JSON_MB): two per worker, then 429.
        queue: 2 * config.importWorkers,
        // One account's imports take at most half of the readers (issue 26), one at the least.
        perOwner: Math.max(1, Math.floor(config.importWorkers / 2)),
        timeout: Duration.millis(timeoutMs),
        maxMemoryMb: WORKER_MEMORY_MB,
        workerData: limits,
        inProcess: (bytes, input, progress) =>
          Promise.resolve(isJsonImport(input) ? readJsonImport(bytes, progress) : readCsv(bytes, limits, taskOf(input).tags, progress))
      }),
      scope
    ))

    /**
     * Runs one body in a worker; a refusal of the body itself (a cap, invalid CSV or JSON) is an
     * `ImportRejected` like the pool's failures. Each chunk of staged rows goes to `onChunk` with
     * `copied`, to call once it is in the staging table: until then the worker waits (and its
     * deadline with it). However the read ends, a worker still waiting is let go.
     */
    const run = <A extends CsvReadResult | JsonImportResult>(
      accountId: string,
      bytes: Uint8Array,
      task: ReturnType<typeof importTask>,
      onChunk: OnChunk,
      what: "CSV" | "JSON body"
    ) =>
      Effect.flatMap(pool, (workers) =>
        workers.run(bytes, accountId, task, (value, resume) =>
          onChunk(value as Uint8Array, () => {
            chunkCopied(task)
            resume()
          }))).pipe(
        Effect.ensuring(Effect.sync(() => stopImport(task))),
        Effect.mapError((error) => rejected(error, timeoutMs, what)),
        // The worker answers the kind of result its input asked for.
        Effect.map((result) => result as A),
        Effect.flatMap((result) =>
          result.ok
            ? Effect.succeed(result as Extract<A, { ok: true }>)
            : Effect.fail(new ImportRejected({ reason: result.kind, message: result.message, param: result.param }))
        ),
        Effect.annotateLogs({ account_id: accountId })
      )

    /** Reads and stages `accountId`'s CSV body in a worker, `tags` added to each row; the bytes are handed over (not to be read again). */
    const read = (accountId: string, bytes: Uint8Array, tags: ReadonlyArray<string>, onChunk: OnChunk) =>
      run<CsvReadResult>(accountId, bytes, importTask("csv", tags), onChunk, "CSV")

    /** Parses, decodes and stages `accountId`'s JSON import body in a worker (import-read.ts); the bytes are handed over. */
    const readJson = (accountId: string, bytes: Uint8Array, onChunk: OnChunk) =>
      run<JsonImportResult>(accountId, bytes, importTask("json", []), onChunk, "JSON body")

    return { read, readJson, limits }
  })
}) {}
