/**
 * The contact import's reader in a worker thread (src/lib/worker-pool.ts runs it, csv-reader.ts
 * owns the pool): each task is one import body whose ArrayBuffer was transferred here. A CSV body
 * (input `{ kind: "csv", tags }`) answers a `CsvReadResult` (csv-read.ts); a JSON body (input
 * `{ kind: "json" }`) a `JsonImportResult` (import-read.ts). Both send their rows as they are
 * read, as chunks of COPY text (import-rows.ts), each a progress message whose buffer is
 * transferred; the worker then waits, blocked, until the main thread has copied the chunk into the
 * import's staging table (import-task.ts's signal), so no more than one chunk of rows is ever held
 * on either side. The CSV limits arrive as workerData. A task that runs past its deadline is not
 * asked to stop: the pool terminates this thread.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { TaskRequest, WorkerReply } from "../../lib/worker-pool.ts"
import { type CsvReadLimits, type CsvReadResult, readCsv } from "./csv-read.ts"
import type * as ImportRead from "./import-read.ts"
import { CHUNK_SENT, isJsonImport, READY, STOP, taskOf } from "./import-task.ts"

const port = parentPort
if (port === null) throw new Error("src/bulk/contacts/import-worker.ts runs as a worker thread")
const limits = workerData as CsvReadLimits

const reply = (message: WorkerReply) => port.postMessage(message)

/** The main thread let the import go (it was refused or failed there): the rest of the body is not read. */
class ImportStopped extends Error {}

/**
 * Wait slices while the main thread copies a chunk: short, so that a terminate() (the pool's
 * deadline, the appliance stopping) takes effect between them whatever Atomics.wait does with it.
 */
const WAIT_SLICE_MS = 200

/** Sends one chunk (its buffer transferred) and returns once the main thread has copied it. */
const sender = (id: number, signalBuffer: SharedArrayBuffer) => {
  const signal = new Int32Array(signalBuffer)
  return (chunk: Uint8Array) => {
    // Not over a STOP the main thread set meanwhile.
    if (Atomics.compareExchange(signal, 0, READY, CHUNK_SENT) === STOP) throw new ImportStopped("the import ended")
    port.postMessage({ id, progress: chunk } satisfies WorkerReply, [chunk.buffer as ArrayBuffer])
    while (Atomics.load(signal, 0) === CHUNK_SENT) Atomics.wait(signal, 0, CHUNK_SENT, WAIT_SLICE_MS)
    if (Atomics.load(signal, 0) === STOP) throw new ImportStopped("the import ended")
  }
}

/**
 * The JSON reader (effect's Schema and the API's bounds) is loaded at the first JSON body: a worker
 * that only reads CSV keeps its small heap (WORKER_MEMORY_MB, csv-reader.ts) for the CSV.
 */
let jsonReader: Promise<typeof ImportRead> | undefined
const loadJsonReader = () => (jsonReader ??= import("./import-read.ts"))

// One body at a time: the pool hands this worker its next task only when it has answered this one.
port.on("message", (request: TaskRequest) => {
  const task = taskOf(request.input)
  const send = sender(request.id, task.signal)
  const work: Promise<CsvReadResult | ImportRead.JsonImportResult> = isJsonImport(request.input)
    ? loadJsonReader().then((reader) => reader.readJsonImport(request.bytes, send))
    : Promise.resolve().then(() => readCsv(request.bytes, limits, task.tags, send))
  work.then(
    (value) => reply({ id: request.id, ok: true, value }),
    (error: unknown) => reply({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  )
})

reply({ ready: true })
