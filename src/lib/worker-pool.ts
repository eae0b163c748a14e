/**
 * A small pool of `node:worker_threads` workers for pure, CPU-bound work that must not hold up the
 * main thread (the inbound parsers): a task is bytes in, a structured-clonable (JSON-like) value
 * out. A scoped resource: the workers start with it and are terminated when its scope closes.
 *
 * - Each of `size` workers runs one task at a time, in the order it was handed them; it is handed
 *   up to `pipeline` tasks at once, so that the next one is already there when one ends (the main
 *   thread may be busy just then). Further tasks wait in a bounded queue; past it, `run` fails at
 *   once (`busy`) and the caller keeps its bytes.
 * - A task's bytes are *transferred* to the worker (the caller's buffer is detached) when they span
 *   their whole ArrayBuffer, otherwise copied once into a fresh one that is transferred.
 * - Every failure is a value (`WorkerTaskError`): the task threw in the worker (`failed`, the
 *   worker stays), the worker crashed or ran out of memory (`crashed`) or the task ran longer than
 *   `timeout` (`timeout`) — then that worker is terminated and replaced, and the task it had been
 *   handed next fails with it (`crashed`: its bytes went with the worker).
 * - A worker that cannot be started (no worker threads, the entry does not load) never loses a
 *   task: its slot runs tasks in this thread with `inProcess` (a warning, logged once; no time
 *   limit there) and tries a worker again a minute later.
 * - Memory: under Node each worker gets `maxMemoryMb` of V8 old generation (`resourceLimits`); a
 *   task that passes it ends its worker alone (`memory`). Deno ignores `resourceLimits` and a worker
 *   at the process-wide heap limit aborts the whole process (checked with Deno 2.9), so there the
 *   bound must come from the work itself (callers' input limits); the pool says so once in the log.
 * - Fair shares: with `perOwner`, one `owner`'s tasks (an account's) occupy at most that many
 *   workers at a time (a worker it ran past its time counts until replaced); the rest wait in its
 *   own line (`ownerQueue`) while other owners' tasks pass to free workers.
 *
 * - Progress: a task may post values before its answer (`onProgress`, e.g. the import's chunks of
 *   rows); its clock stops while its caller handles one and runs on once the caller resumes it, so
 *   the deadline bounds the worker's own work, not the caller's.
 *
 * The bookkeeping is plain callbacks, not fibers: a task costs one `Effect.async`, one message each
 * way and one timer, which matters when the main thread is the busy one.
 * The worker entry speaks a tiny protocol (`TaskRequest` in, `WorkerReply` out, `{ ready: true }`
 * once its modules are loaded) and runs its tasks one after the other; src/lib/worker-thread.ts
 * starts it the same way under `tsx`, vitest and Deno.
 */
import type { Worker } from "node:worker_threads"
import { Duration, Effect, Exit, Runtime, type Scope } from "effect"
import { isDeno, newWorker, ownBuffer } from "./worker-thread.ts"

export {
  type OnProgress,
  type TaskRequest,
  type WorkerPool,
  type WorkerPoolOptions,
  type WorkerPoolStats,
  type WorkerReply,
  WorkerTaskError
} from "./worker-pool-contract.ts"
import type { OnProgress, TaskRequest, WorkerPool, WorkerPoolOptions, WorkerPoolStats, WorkerReply } from "./worker-pool-contract.ts"
import { WorkerTaskError } from "./worker-pool-contract.ts"

interface Task<A> {
  readonly id: number
  readonly onProgress: OnProgress | undefined
  /** What is left of its time while its clock is stopped (undefined: not started, or running). */
  remainingMs: number | undefined
  /** When its time runs out, while its clock runs. */
  deadline: number
  /** Its clock is stopped: a progress value is with its caller. */
  paused: boolean
  readonly owner: string | undefined
  readonly input: unknown
  /** Until it is handed over. */
  bytes: Uint8Array | undefined
  /** Settled (answered, failed or abandoned by its caller): later news of it is ignored. */
  done: boolean
  readonly resume: (exit: Exit.Exit<A, WorkerTaskError>) => void
  timer: ReturnType<typeof setTimeout> | undefined
}

interface Slot<A> {
  /** `fallback`: no worker could be started; tasks run in this thread until `retryAt`. */
  state: "starting" | "ready" | "fallback" | "closed"
  worker: Worker | undefined
  /** Handed to the worker (or running in this thread), oldest first: the first is the one running. */
  readonly inflight: Array<Task<A>>
  retryAt: number
  /** The owner whose task ran this slot's last worker past its time or memory: its share holds the slot until the new worker is ready. */
  chargedTo: string | undefined
}

/** After a worker could not be started, its slot runs tasks in this thread this long before trying again. */
const RESPAWN_PAUSE_MS = 60_000

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

const taskError = (reason: WorkerTaskError["reason"], message: string) => Exit.fail(new WorkerTaskError({ reason, message }))

const isReply = (message: unknown): message is WorkerReply => typeof message === "object" && message !== null

/** A scoped pool of `options.size` workers running `options.file`. */
export const makeWorkerPool = <A>(options: WorkerPoolOptions<A>): Effect.Effect<WorkerPool<A>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const size = Math.max(1, Math.floor(options.size))
    const pipeline = Math.max(1, Math.floor(options.pipeline ?? 2))
    const maxQueue = Math.max(1, Math.floor(options.queue ?? 4 * size * pipeline))
    const perOwner = Math.max(1, Math.min(size, Math.floor(options.perOwner ?? size)))
    const ownerQueue = Math.max(1, Math.floor(options.ownerQueue ?? (options.perOwner === undefined ? maxQueue : Math.ceil(maxQueue / 2))))
    const timeoutMs = Duration.toMillis(options.timeout)
    const startTimeoutMs = Duration.toMillis(options.startTimeout ?? Duration.seconds(60))
    // Log lines from worker events go through the logger (and annotations) of the pool's creator.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const log = (effect: Effect.Effect<void>) => void runFork(effect)

    const queue: Array<Task<A>> = []
    const slots: Array<Slot<A>> = Array.from({ length: size }, () => ({ state: "starting", worker: undefined, inflight: [], retryAt: 0, chargedTo: undefined }))
    const counts = { started: 0, replaced: 0, inProcess: 0 }
    let closed = false
    let warned = false
    let nextId = 0

    const settle = (task: Task<A>, exit: Exit.Exit<A, WorkerTaskError>) => {
      if (task.timer !== undefined) clearTimeout(task.timer)
      task.timer = undefined
      task.bytes = undefined
      if (task.done) return
      task.done = true
      task.resume(exit)
    }

    const terminate = (worker: Worker) => Promise.resolve(worker.terminate()).then(() => undefined, () => undefined)

    /** The running task's clock starts when it reaches the head of its worker's line. */
    const armHead = (slot: Slot<A>, worker: Worker) => {
      const head = slot.inflight[0]
      if (head === undefined || head.timer !== undefined || head.paused || slot.state !== "ready") return
      const ms = head.remainingMs ?? timeoutMs
      head.remainingMs = undefined
      head.deadline = Date.now() + ms
      head.timer = setTimeout(() => {
        if (slot.worker !== worker || slot.inflight[0] !== head) return
        replace(slot, worker, `the task ran longer than ${Duration.format(Duration.millis(timeoutMs))}`, "timeout")
      }, ms)
    }

    /** A progress value of `task`: its clock stops until its caller resumes it. */
    const progress = (slot: Slot<A>, worker: Worker, task: Task<A>, value: unknown) => {
      if (task.done || task.onProgress === undefined) return
      if (task.timer !== undefined) {
        clearTimeout(task.timer)
        task.timer = undefined
        task.remainingMs = Math.max(0, task.deadline - Date.now())
      }
      task.paused = true
      let resumed = false
      task.onProgress(value, () => {
        if (resumed) return
        resumed = true
        task.paused = false
        if (slot.worker === worker && !task.done) armHead(slot, worker)
      })
    }

    /** Lets a crashed or stuck worker go: what it had been handed fails, and a new one starts. */
    const replace = (slot: Slot<A>, worker: Worker, reason: string, kind: "crashed" | "memory" | "timeout") => {
      counts.replaced++
      slot.worker = undefined
      void terminate(worker)
      const [head, ...rest] = slot.inflight.splice(0)
      slot.chargedTo = kind === "crashed" ? undefined : head?.owner
      if (head !== undefined) settle(head, taskError(kind, reason))
      for (const task of rest) settle(task, taskError("crashed", `its worker was replaced (${reason}) before it ran`))
      log(Effect.logWarning(`${options.name}: worker replaced`).pipe(Effect.annotateLogs({ reason })))
      start(slot)
    }

    const startFailed = (slot: Slot<A>, reason: string) => {
      slot.state = "fallback"
      slot.worker = undefined
      slot.chargedTo = undefined
      slot.retryAt = Date.now() + RESPAWN_PAUSE_MS
      if (!warned) {
        warned = true
        log(Effect.logWarning(`${options.name}: a worker thread could not be started; running tasks in this thread`).pipe(
          Effect.annotateLogs({ error: reason })
        ))
      }
      pump()
    }

    const start = (slot: Slot<A>) => {
      if (closed) return
      slot.state = "starting"
      let worker: Worker
      try {
        worker = newWorker(options.file, options.maxMemoryMb, options.workerData)
      } catch (error) {
        return startFailed(slot, errorText(error))
      }
      slot.worker = worker
      const startTimer = setTimeout(() => {
        if (slot.worker !== worker || slot.state !== "starting") return
        void terminate(worker)
        startFailed(slot, `the worker was not ready within ${Duration.format(Duration.millis(startTimeoutMs))}`)
      }, startTimeoutMs)
      const gone = (reason: string, kind: "crashed" | "memory" = "crashed") => {
        if (slot.worker !== worker) return // already let go
        clearTimeout(startTimer)
        if (slot.state === "starting") {
          void terminate(worker)
          return startFailed(slot, reason)
        }
        replace(slot, worker, reason, kind)
      }
      // Always listened to: an unheard 'error' event would throw in this thread.
      worker.on("error", (error: Error & { code?: string }) =>
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? gone(`the task ran the worker out of memory (${options.maxMemoryMb ?? "default"} MB heap): ${error.message}`, "memory")
          : gone(`the worker crashed: ${error.message}`))
      worker.on("exit", (code: number) => gone(`the worker exited (code ${code})`))
      worker.on("messageerror", (error: Error) => {
        if (slot.worker !== worker || slot.inflight.length === 0) return
        // Answers come in order: the unreadable one is the oldest task's.
        settle(slot.inflight.shift()!, taskError("failed", `the worker's answer could not be read: ${error.message}`))
        armHead(slot, worker)
        pump()
      })
      worker.on("message", (message: unknown) => {
        if (slot.worker !== worker || !isReply(message)) return
        if ("ready" in message) {
          if (slot.state !== "starting") return
          clearTimeout(startTimer)
          slot.state = "ready"
          slot.chargedTo = undefined
          counts.started++
          log(Effect.logDebug(`${options.name}: worker started`).pipe(Effect.annotateLogs({ thread_id: worker.threadId })))
          return pump()
        }
        const index = slot.inflight.findIndex((task) => task.id === message.id)
        if (index < 0) return
        if ("progress" in message) return progress(slot, worker, slot.inflight[index]!, message.progress)
        const [task] = slot.inflight.splice(index, 1)
        // The entry promises values of type A: it is code of this program.
        settle(task!, message.ok ? Exit.succeed(message.value as A) : taskError("failed", message.error))
        armHead(slot, worker)
        pump()
      })
    }

    const dispatch = (slot: Slot<A>, task: Task<A>) => {
      const bytes = task.bytes!
      slot.inflight.push(task)
      if (slot.state === "fallback") {
        task.bytes = undefined
        counts.inProcess++
        // In this thread nothing waits for the caller: its progress values are handed over as they come.
        const onValue = (value: unknown) => task.onProgress?.(value, () => {})
        Promise.resolve(bytes).then((b) => options.inProcess(b, task.input, onValue)).then(
          (value) => Exit.succeed(value),
          (error: unknown) => taskError("failed", errorText(error))
        ).then((exit) => {
          const index = slot.inflight.indexOf(task)
          if (index >= 0) slot.inflight.splice(index, 1)
          settle(task, exit)
          pump()
        })
        return
      }
      const worker = slot.worker!
      const payload = ownBuffer(bytes)
      task.bytes = undefined
      try {
        worker.postMessage({ id: task.id, bytes: payload, input: task.input } satisfies TaskRequest, [payload.buffer as ArrayBuffer])
      } catch (error) {
        slot.inflight.pop()
        return settle(task, taskError("failed", `the task could not be sent: ${errorText(error)}`))
      }
      armHead(slot, worker)
    }

    const holds = (slot: Slot<A>, owner: string) => slot.chargedTo === owner || slot.inflight.some((task) => task.owner === owner)
    const open = (slot: Slot<A>) => (slot.state === "ready" || slot.state === "fallback") && slot.inflight.length < pipeline

    /** The least busy open worker for `owner`'s task: one it already occupies once it has its share. */
    const slotFor = (owner: string | undefined): Slot<A> | undefined => {
      const limited = owner !== undefined && perOwner < size && slots.filter((slot) => holds(slot, owner)).length >= perOwner
      let best: Slot<A> | undefined
      for (const slot of slots) {
        if (!open(slot) || (limited && !holds(slot, owner))) continue
        if (best === undefined || slot.inflight.length < best.inflight.length) best = slot
      }
      return best
    }

    /** Hands waiting tasks, oldest first, to the least busy workers (a task whose owner has its share lets others pass); retries a worker where the pause is over. */
    const pump = () => {
      if (closed) return
      const now = Date.now()
      for (const slot of slots) {
        if (slot.state === "fallback" && slot.inflight.length === 0 && now >= slot.retryAt) start(slot)
      }
      for (let index = 0; index < queue.length && slots.some(open);) {
        const slot = slotFor(queue[index]!.owner)
        if (slot === undefined) {
          index++ // its owner has its share: it waits, later tasks of others may pass
        } else {
          dispatch(slot, queue.splice(index, 1)[0]!)
          index = 0
        }
      }
    }

    const waitingOf = (owner: string) => queue.reduce((n, task) => (task.owner === owner ? n + 1 : n), 0)

    const submit = (bytes: Uint8Array, owner: string | undefined, resume: Task<A>["resume"], input?: unknown, onProgress?: OnProgress): Task<A> => {
      const task: Task<A> = {
        id: ++nextId, owner, input, bytes, done: false, resume, timer: undefined, onProgress, remainingMs: undefined, deadline: 0, paused: false
      }
      if (closed) settle(task, taskError("shutdown", `${options.name}: the pool is shut down`))
      else if (queue.length >= maxQueue) settle(task, taskError("busy", `${options.name}: ${maxQueue} tasks are waiting already`))
      else if (owner !== undefined && ownerQueue < maxQueue && waitingOf(owner) >= ownerQueue) {
        settle(task, taskError("busy", `${options.name}: ${ownerQueue} tasks of the same owner are waiting already`))
      } else {
        queue.push(task)
        pump()
      }
      return task
    }

    /** Its caller went away: forget it if it still waits; once handed over, its answer is ignored. */
    const abandon = (task: Task<A>) => {
      const index = queue.indexOf(task)
      if (index >= 0) queue.splice(index, 1)
      task.done = true
    }

    const close = async () => {
      closed = true
      const shutdown = taskError("shutdown", `${options.name}: the pool is shutting down`)
      for (const task of queue.splice(0)) settle(task, shutdown)
      const exits: Array<Promise<void>> = []
      for (const slot of slots) {
        for (const task of slot.inflight.splice(0)) settle(task, shutdown)
        const worker = slot.worker
        slot.state = "closed"
        slot.worker = undefined
        if (worker !== undefined) exits.push(terminate(worker))
      }
      await Promise.all(exits)
    }

    yield* Effect.addFinalizer(() => Effect.promise(close).pipe(Effect.timeout(Duration.seconds(10)), Effect.ignore))
    if (isDeno && options.maxMemoryMb !== undefined) {
      log(Effect.logInfo(`${options.name}: Deno sets no per-worker memory limit; the tasks' own input limits bound their memory`))
    }
    for (const slot of slots) start(slot)

    const run = (bytes: Uint8Array, owner?: string, input?: unknown, onProgress?: OnProgress): Effect.Effect<A, WorkerTaskError> =>
      Effect.async<A, WorkerTaskError>((resume) => {
        const task = submit(bytes, owner, resume, input, onProgress)
        return Effect.sync(() => abandon(task))
      })

    const runAll = (tasks: ReadonlyArray<Uint8Array>, owner?: string): Effect.Effect<ReadonlyArray<Exit.Exit<A, WorkerTaskError>>> =>
      tasks.length === 0 ? Effect.succeed([]) : Effect.async((resume) => {
        const exits: Array<Exit.Exit<A, WorkerTaskError>> = new Array(tasks.length)
        let left = tasks.length
        const submitted = tasks.map((bytes, i) =>
          submit(bytes, owner, (exit) => {
            exits[i] = exit
            if (--left === 0) resume(Effect.succeed(exits))
          })
        )
        return Effect.sync(() => submitted.forEach(abandon))
      })

    const alive = () => slots.filter((slot) => slot.state === "ready").length
    const stats = Effect.sync((): WorkerPoolStats => ({ ...counts, alive: alive(), queued: queue.length }))
    return { size, run, runAll, stats }
  })
