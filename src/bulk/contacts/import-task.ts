/**
 * What the import pool's task input says (import-worker.ts): a JSON body has `{ kind: "json" }`, a
 * CSV body `{ kind: "csv", tags }` (the query's `tags`, added to every row as it is staged). Both
 * carry `signal`, the few shared bytes through which the main thread answers each chunk of staged
 * rows the worker sends (back to `READY` once copied, or `STOP` when the import ended without it)
 * while the worker waits for it. Its own module: the worker reads it without loading the JSON reader.
 */

/** The signal's states: no chunk in flight, a chunk on its way (the worker waits), or the import is over. */
export const READY = 0
export const CHUNK_SENT = 1
export const STOP = 2

export interface ImportTask {
  readonly kind: "csv" | "json"
  /** The query's tags (CSV; a JSON body names its own). */
  readonly tags: ReadonlyArray<string>
  /** One Int32: READY, CHUNK_SENT or STOP (Atomics). */
  readonly signal: SharedArrayBuffer
}

export const importTask = (kind: "csv" | "json", tags: ReadonlyArray<string>): ImportTask => ({ kind, tags, signal: new SharedArrayBuffer(4) })

export const isJsonImport = (input: unknown) => typeof input === "object" && input !== null && (input as { kind?: unknown }).kind === "json"

/** A task's tags and signal (the pool's input is untyped where it crosses threads). */
export const taskOf = (input: unknown): ImportTask => input as ImportTask

/** The main thread's side: the chunk was copied, the worker reads on. */
export const chunkCopied = (task: ImportTask) => {
  const signal = new Int32Array(task.signal)
  // Not over a STOP: a stopped import stays stopped.
  Atomics.compareExchange(signal, 0, CHUNK_SENT, READY)
  Atomics.notify(signal, 0)
}

/** The main thread's side: the import ended (refused, failed, abandoned): a waiting worker gives up its task. */
export const stopImport = (task: ImportTask) => {
  const signal = new Int32Array(task.signal)
  Atomics.store(signal, 0, STOP)
  Atomics.notify(signal, 0)
}
