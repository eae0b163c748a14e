/**
 * Group commit: items submitted concurrently (the MX listener's messages, one per SMTP session;
 * the MTA's message reads and outcome writes, one per attempt) are written together, one
 * statement for the group, and each submitter resumes only once the write that holds its item has
 * committed. Groups form by themselves: a writer takes whatever waits, and what arrives while it
 * writes waits for the next round, so a quiet server writes each item at once and a busy one
 * writes many per round trip. (Measured on the bench: one committed INSERT per message cost ~0.6
 * ms of main-thread CPU in the SQL client and socket writes; a round trip per group is what lets
 * durable acceptance keep pace with a bare listener.)
 *
 * A group is bounded by items and by bytes (a few 25 MB messages must not become one statement).
 * When a group's write fails, each of its items is written alone, so that one bad item fails only
 * its own submitter; when that fails too, the submitter gets the error. At shutdown, submitters
 * still waiting are interrupted rather than left hanging.
 *
 * The bookkeeping is plain callbacks, as in src/lib/worker-pool.ts: an item costs one
 * `Effect.async`, and a fiber runs per group write, not per item — this is the listener's thread.
 */
import { Effect, Exit, Fiber, FiberId, Runtime, type Scope } from "effect"

export interface GroupCommitOptions<I, A, E> {
  /** Writes one group; answers one result per item, in the items' order. */
  readonly write: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<A>, E>
  /** Most items in one group. */
  readonly maxItems: number
  /** Most bytes in one group (by `sizeOf`); an item larger than this is a group of its own. */
  readonly maxBytes?: number
  readonly sizeOf?: (item: I) => number
  /** Groups written at once: while one waits for its commit, the next can be sent. */
  readonly writers?: number
}

export interface GroupCommit<I, A, E> {
  /** Resumes with the item's result once the write holding it has committed. */
  readonly submit: (item: I) => Effect.Effect<A, E>
  /**
   * `submit` as a plain callback, for a caller that runs no fiber per item (the tracking endpoints'
   * front door, src/bulk/tracking/fast-path.ts): `done` is called once, with the item's result.
   */
  readonly offer: (item: I, done: (exit: Exit.Exit<A, E>) => void) => void
}

interface Entry<I, A, E> {
  readonly item: I
  /** Settled (written, failed or abandoned): later news is ignored. */
  done: boolean
  readonly resume: (exit: Exit.Exit<A, E>) => void
}

/** A scoped group writer. */
export const makeGroupCommit = <I, A, E>(options: GroupCommitOptions<I, A, E>): Effect.Effect<GroupCommit<I, A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxItems = Math.max(1, Math.floor(options.maxItems))
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY
    const sizeOf = options.sizeOf ?? (() => 0)
    const writers = Math.max(1, options.writers ?? 1)
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const waiting: Array<Entry<I, A, E>> = []
    const writing = new Set<Fiber.RuntimeFiber<void>>()
    let closed = false

    const settle = (entry: Entry<I, A, E>, exit: Exit.Exit<A, E>) => {
      if (entry.done) return
      entry.done = true
      entry.resume(exit)
    }

    const writeGroup = (entries: ReadonlyArray<Entry<I, A, E>>): Effect.Effect<void> =>
      options.write(entries.map((entry) => entry.item)).pipe(
        Effect.flatMap((results) =>
          results.length === entries.length
            ? Effect.sync(() => entries.forEach((entry, i) => settle(entry, Exit.succeed(results[i]!))))
            : Effect.dieMessage(`group commit: ${results.length} results for ${entries.length} items`)
        ),
        Effect.catchAllCause((cause) =>
          entries.length === 1
            ? Effect.sync(() => settle(entries[0]!, Exit.failCause(cause)))
            : Effect.forEach(entries, (entry) => writeGroup([entry]), { discard: true })
        ),
        // Interrupted mid-write (shutdown): whatever committed or not, nobody is left waiting.
        Effect.onInterrupt(() => Effect.sync(() => entries.forEach((entry) => settle(entry, Exit.interrupt(FiberId.none)))))
      )

    /** The next group: up to maxItems waiting items, cut at maxBytes (at least one item). */
    const takeGroup = () => {
      const group: Array<Entry<I, A, E>> = []
      let bytes = 0
      while (waiting.length > 0 && group.length < maxItems) {
        const entry = waiting[0]!
        if (entry.done) {
          waiting.shift()
          continue
        }
        const size = sizeOf(entry.item)
        if (group.length > 0 && bytes + size > maxBytes) break
        group.push(waiting.shift()!)
        bytes += size
      }
      return group
    }

    const pump = () => {
      while (!closed && writing.size < writers && waiting.length > 0) {
        const group = takeGroup()
        if (group.length === 0) return
        const fiber = runFork(writeGroup(group))
        writing.add(fiber)
        fiber.addObserver(() => {
          writing.delete(fiber)
          pump()
        })
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        for (const entry of waiting.splice(0)) settle(entry, Exit.interrupt(FiberId.none))
        return Fiber.interruptAll(writing)
      })
    )

    const enqueue = (item: I, resume: (exit: Exit.Exit<A, E>) => void): Entry<I, A, E> => {
      const entry: Entry<I, A, E> = { item, done: false, resume }
      if (closed) {
        settle(entry, Exit.interrupt(FiberId.none))
        return entry
      }
      waiting.push(entry)
      pump()
      return entry
    }

    const submit = (item: I): Effect.Effect<A, E> =>
      Effect.async<A, E>((resume) => {
        const entry = enqueue(item, resume)
        // A submitter that goes away before its write stops waiting; once written, its item stays written.
        return Effect.sync(() => {
          entry.done = true
        })
      })
    return { submit, offer: (item, done) => void enqueue(item, done) }
  })
