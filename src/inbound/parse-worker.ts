/**
 * The inbound parsers in a worker thread (src/lib/worker-pool.ts runs it): each task is one raw
 * message whose ArrayBuffer was transferred here, and its answer is the `Understood` value — plain
 * data, cloned back to the processor, which applies it in the main thread. Nothing else happens
 * here: no database, no clock, no logging. The limits the appliance was configured with arrive as
 * workerData.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { TaskRequest, WorkerReply } from "../lib/worker-pool.ts"
import { configureDmarcLimits, type DmarcLimits } from "./parse/dmarc/index.ts"
import { understandMessage } from "./understand.ts"

/** What the processor hands each worker at start: the parsers' configured limits. */
export interface ParseWorkerData {
  readonly dmarcLimits: DmarcLimits
}

const port = parentPort
if (port === null) throw new Error("src/inbound/parse-worker.ts runs as a worker thread")
const data = workerData as ParseWorkerData | undefined
if (data?.dmarcLimits !== undefined) configureDmarcLimits(data.dmarcLimits)

const reply = (message: WorkerReply) => port.postMessage(message)

const understand = async (request: TaskRequest) => {
  // A view over the transferred bytes, not a copy.
  const raw = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength)
  try {
    reply({ id: request.id, ok: true, value: await understandMessage(raw) })
  } catch (error) {
    reply({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  }
}

// One message at a time, in the order they came (the pool hands over the next while one runs).
let queue = Promise.resolve()
port.on("message", (request: TaskRequest) => {
  queue = queue.then(() => understand(request))
})

reply({ ready: true })
