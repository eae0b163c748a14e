/**
 * Small caches of the MTA: a least-recently-used map bounded by the bytes it holds, and on top of
 * it a lookup cache whose concurrent misses of one key share one lookup (a claim hands out a
 * hundred deliveries to one domain at once: without sharing, each would ask DNS or the database
 * itself) and whose answers expire.
 */
import { Clock, Deferred, Effect, Exit } from "effect"

/**
 * A cache bounded by the bytes it holds, not by its count: one cached value can weigh 5 KB or
 * 20 MB, so a count bound says nothing about memory (a size of 1 per entry makes it a count
 * bound). Least recently used entries go first; an entry larger than the whole budget is not kept.
 */
export class ByteBoundedCache<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly bytes: number }>()
  private total = 0
  constructor(private readonly maxBytes: number, private readonly sizeOf: (value: V) => number) {}

  get size(): number {
    return this.entries.size
  }
  get bytes(): number {
    return this.total
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    // Map order is insertion order: re-inserting marks the entry as the most recently used.
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  set(key: string, value: V): void {
    this.delete(key)
    const bytes = this.sizeOf(value)
    if (bytes > this.maxBytes) return
    while (this.total + bytes > this.maxBytes) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.delete(oldest.value)
    }
    this.entries.set(key, { value, bytes })
    this.total += bytes
  }

  delete(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.total -= entry.bytes
  }
}

export interface LookupCacheOptions<A> {
  /** How long an answer is used (ms). */
  readonly ttlMs: number
  /** Most keys kept (least recently used go first). */
  readonly maxEntries: number
  /** Whether an answer is worth keeping (a failure never is: the next caller asks again). */
  readonly keep: (answer: A) => boolean
}

interface Entry<A, E> {
  readonly expires: number
  readonly answer: Deferred.Deferred<A, E>
}

/** `get(key, lookup)`: the kept answer for `key`, or `lookup`'s — run once for all who ask meanwhile. */
export const makeLookupCache = <A, E>(options: LookupCacheOptions<A>) => {
  const entries = new ByteBoundedCache<Entry<A, E>>(options.maxEntries, () => 1)
  const get = <R>(key: string, lookup: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const hit = entries.get(key)
      if (hit !== undefined && hit.expires > now) return yield* Deferred.await(hit.answer)
      const entry: Entry<A, E> = { expires: now + options.ttlMs, answer: yield* Deferred.make<A, E>() }
      entries.set(key, entry)
      return yield* lookup.pipe(
        Effect.onExit((exit) =>
          Effect.suspend(() => {
            const kept = Exit.isSuccess(exit) && options.keep(exit.value)
            if (!kept && entries.get(key) === entry) entries.delete(key)
            return Deferred.done(entry.answer, exit)
          })
        )
      )
    })
  return { get } as const
}
