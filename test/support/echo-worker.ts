/**
 * A small worker for test/unit/worker-pool.test.ts, speaking src/lib/worker-pool.ts's protocol.
 * The task's bytes are a command: `echo:<text>`, `sleep:<ms>`, `throw` (the task fails), `crash`
 * (an uncaught error kills the worker), `exit` (the worker exits), `oom` (fills the heap), `hang` (a busy loop),
 * `progress:<ms>` (posts one progress value, answers `ms` later). Unlike
 * the parse worker it answers as soon as it can (`sleep` tasks overlap).
 */
import { parentPort, threadId } from "node:worker_threads"
import type { TaskRequest, WorkerReply } from "../../src/lib/worker-pool.ts"

const port = parentPort
if (port === null) throw new Error("echo-worker.ts runs as a worker thread")
const reply = (message: WorkerReply) => port.postMessage(message)
// Typed on purpose: proves this .ts file went through a TypeScript loader, not plain Node.
const typed = (n: number): number => n

port.on("message", (request: TaskRequest) => {
  const command = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength).toString("utf8")
  const [verb = "", arg = ""] = command.split(/:(.*)/s)
  const answer = (value: unknown) => reply({ id: request.id, ok: true, value })
  switch (verb) {
    case "echo":
      return answer({ text: arg, threadId, bytes: typed(request.bytes.byteLength), transferred: request.bytes.buffer.byteLength === request.bytes.byteLength })
    case "sleep":
      return void setTimeout(() => answer({ threadId }), Number(arg))
    case "progress":
      reply({ id: request.id, progress: { sent: true } })
      return void setTimeout(() => answer({ threadId }), Number(arg))
    case "throw":
      return reply({ id: request.id, ok: false, error: "told to throw" })
    case "crash":
      throw new Error("told to crash") // uncaught: the worker dies before it reads its next task
    case "exit":
      return process.exit(7)
    case "oom": {
      const hoard: Array<Array<number>> = []
      for (;;) hoard.push(Array.from({ length: 1e5 }, (_, i) => i))
    }
    case "hang":
      for (;;) { /* a busy loop: only terminate() ends it */ }
    default:
      return reply({ id: request.id, ok: false, error: `unknown command ${verb}` })
  }
})

reply({ ready: true })
