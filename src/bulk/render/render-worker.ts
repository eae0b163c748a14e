/**
 * A render worker (src/lib/worker-pool.ts runs it for the RenderEngine service): each task is a
 * RenderTask as JSON bytes, its answer a RenderAnswer (tasks.ts). Prepared contents stay cached
 * here between tasks, so a campaign's per-recipient renders parse nothing. No database, clock or
 * logging; the engine's limits arrive as workerData. The pool terminates this thread when a task
 * passes its deadline: that, not a check between steps, is what bounds a render.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { TaskRequest, WorkerReply } from "../../lib/worker-pool.ts"
import type { EngineLimits } from "./engine.ts"
import { makeTaskRunner, type RenderTask } from "./tasks.ts"

/** What the RenderEngine hands each worker at start. */
export interface RenderWorkerData {
  readonly limits: EngineLimits
}

const port = parentPort
if (port === null) throw new Error("src/bulk/render/render-worker.ts runs as a worker thread")
const run = makeTaskRunner((workerData as RenderWorkerData | undefined)?.limits)
const decoder = new TextDecoder()

const reply = (message: WorkerReply) => port.postMessage(message)

const answer = async (request: TaskRequest) => {
  try {
    const task = JSON.parse(decoder.decode(request.bytes)) as RenderTask
    reply({ id: request.id, ok: true, value: await run(task) })
  } catch (error) {
    reply({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  }
}

// One task at a time, in the order they came (the pool hands over the next while one runs).
let queue = Promise.resolve()
port.on("message", (request: TaskRequest) => {
  queue = queue.then(() => answer(request))
})

reply({ ready: true })
