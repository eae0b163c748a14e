/**
 * The worker pool's contract (src/lib/worker-pool.ts): what a caller hands it and gets back, and the
 * protocol between the pool and a worker entry. Kept apart from the scheduling so a worker entry and
 * a caller read only this.
 */
import { Data, type Duration, type Effect, type Exit } from "effect"

/** What the pool posts to a worker: one task, its bytes' ArrayBuffer transferred. */
export interface TaskRequest {
  readonly id: number
  readonly bytes: Uint8Array
  readonly input?: unknown // what the task is, when one worker does more than one kind of work
}

/**
 * What a worker posts back: `{ ready: true }` once it has loaded, then one reply per task, before
 * which a task may post `progress` values (each handed to its caller's `onProgress`).
 */
export type WorkerReply =
  | { readonly ready: true }
  | { readonly id: number; readonly progress: unknown }
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string }

export class WorkerTaskError extends Data.TaggedError("WorkerTaskError")<{
  /**
   * `failed`: the task threw; `memory`: the task ran its worker out of memory; `crashed` /
   * `timeout`: its worker was replaced (`crashed` also for the tasks handed to a worker behind the
   * one that ended it); `busy`: the queue was full (nothing was sent); `shutdown`: the pool closed.
   * `failed` and `memory` are the task's own doing: the same bytes will fail the same way again.
   */
  readonly reason: "failed" | "memory" | "crashed" | "timeout" | "busy" | "shutdown"
  readonly message: string
}> {}

export interface WorkerPoolOptions<A> {
  /** Names the pool in log lines. */
  readonly name: string
  /** The worker's entry module (`.ts` or `.js`). */
  readonly file: URL
  /** Workers (at least 1). */
  readonly size: number
  /** The longest a task may run in its worker before that worker is replaced. */
  readonly timeout: Duration.DurationInput
  /** The same work in this thread, for when no worker can be started (`progress` as a worker's progress messages). */
  readonly inProcess: (bytes: Uint8Array, input: unknown, progress: (value: unknown) => void) => Promise<A>
  /** Tasks handed to each worker at a time (default 2: one runs, the next waits in the worker). */
  readonly pipeline?: number
  /** Tasks that may wait for a worker; past them `run` fails with `busy` (default 4 × size × pipeline). */
  readonly queue?: number
  /** How long a worker may take to load (default 60 s). */
  readonly startTimeout?: Duration.DurationInput
  /** V8 old-generation limit of each worker, in MB (Node only): past it the worker crashes, not the process. */
  readonly maxMemoryMb?: number
  /** Structured-clonable start-up data for each worker (`workerData`), e.g. its limits. */
  readonly workerData?: unknown
  /** The most workers one owner's tasks may occupy at a time (default: all of them). */
  readonly perOwner?: number
  /** Tasks one owner may have waiting; past them its `run` fails with `busy` (default: half the queue when `perOwner` is set). */
  readonly ownerQueue?: number
}

export interface WorkerPoolStats {
  /** Workers started (loaded and ready), replacements included. */
  readonly started: number
  /** Workers ready now. */
  readonly alive: number
  /** Workers terminated after a crash or a timeout. */
  readonly replaced: number
  /** Tasks run in this thread because no worker could be started. */
  readonly inProcess: number
  /** Tasks waiting for a worker now. */
  readonly queued: number
}

export interface WorkerPool<A> {
  readonly size: number
  /** Runs one task; the bytes are handed over (see above). `owner` names whose share it counts against. */
  readonly run: (bytes: Uint8Array, owner?: string, input?: unknown, onProgress?: OnProgress) => Effect.Effect<A, WorkerTaskError>
  /**
   * Runs several tasks and resumes once all have settled, with each one's outcome in order: one
   * effect for a batch rather than a fiber per task, for callers that handle tasks in batches.
   */
  readonly runAll: (tasks: ReadonlyArray<Uint8Array>, owner?: string) => Effect.Effect<ReadonlyArray<Exit.Exit<A, WorkerTaskError>>>
  readonly stats: Effect.Effect<WorkerPoolStats>
}

/**
 * A task's progress value, and `resume`: the task's clock stops while its caller handles a progress
 * value (the worker waits for it then, e.g. for a database write) and runs again once it is called.
 */
export type OnProgress = (value: unknown, resume: () => void) => void
