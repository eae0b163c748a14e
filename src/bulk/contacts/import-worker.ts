/**
 * The contact import's reader in a worker thread (src/lib/worker-pool.ts runs it, csv-reader.ts
 * owns the pool): each task is one import body whose ArrayBuffer was transferred here. A CSV body
 * (input `{ kind: "csv", tags }`) answers a `CsvReadResult` (csv-read.ts); a JSON body (input
 * `{ kind: "json" }`) a `JsonImportResult` (import-read.ts): both its contacts gathered into batch texts. The CSV limits arrive as workerData. A task that runs
 * past its deadline is not asked to stop: the pool terminates this thread.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { TaskRequest, WorkerReply } from "../../lib/worker-pool.ts"
import { type CsvReadLimits, type CsvReadResult, readCsv } from "./csv-read.ts"
import type * as ImportRead from "./import-read.ts"
import { csvTaskTags, isJsonImport } from "./import-task.ts"

const port = parentPort
if (port === null) throw new Error("src/bulk/contacts/import-worker.ts runs as a worker thread")
const limits = workerData as CsvReadLimits

const reply = (message: WorkerReply) => port.postMessage(message)

/**
 * A gathered import's bytes (import-rows.ts) are transferred, not copied: the batches of a 15 MiB
 * body are tens of MB, and a copy would live beside the worker's until it collected.
 */
const answer = (id: number, value: CsvReadResult | ImportRead.JsonImportResult) =>
  port.postMessage({ id, ok: true, value } satisfies WorkerReply, value.ok ? [value.gathered.bytes.buffer as ArrayBuffer] : [])

/**
 * The JSON reader (effect's Schema and the API's bounds) is loaded at the first JSON body: a worker
 * that only reads CSV keeps its small heap (WORKER_MEMORY_MB, csv-reader.ts) for the CSV.
 */
let jsonReader: Promise<typeof ImportRead> | undefined
const loadJsonReader = () => (jsonReader ??= import("./import-read.ts"))

// One body at a time: the pool hands this worker its next task only when it has answered this one.
port.on("message", (request: TaskRequest) => {
  const work = isJsonImport(request.input)
    ? loadJsonReader().then((reader) => reader.readJsonImport(request.bytes))
    : Promise.resolve().then(() => readCsv(request.bytes, limits, csvTaskTags(request.input)))
  work.then(
    (value) => answer(request.id, value),
    (error: unknown) => reply({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  )
})

reply({ ready: true })
