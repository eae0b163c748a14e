/**
 * The contact import's CSV reader in a worker thread (src/lib/worker-pool.ts runs it, csv-reader.ts
 * owns the pool): each task is one CSV body whose ArrayBuffer was transferred here, its answer a
 * `CsvReadResult` (csv-read.ts). The limits arrive as workerData. A task that runs past its
 * deadline is not asked to stop: the pool terminates this thread.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { TaskRequest, WorkerReply } from "../../lib/worker-pool.ts"
import { type CsvReadLimits, readCsv } from "./csv-read.ts"

const port = parentPort
if (port === null) throw new Error("src/bulk/contacts/csv-worker.ts runs as a worker thread")
const limits = workerData as CsvReadLimits

const reply = (message: WorkerReply) => port.postMessage(message)

// One body at a time, synchronously: the pool hands this worker its next task only when it is free.
port.on("message", (request: TaskRequest) => {
  try {
    reply({ id: request.id, ok: true, value: readCsv(request.bytes, limits) })
  } catch (error) {
    reply({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  }
})

reply({ ready: true })
