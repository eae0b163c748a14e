/**
 * Who a token is, remembered for a few seconds, so that a busy key does not cost a database round
 * trip on every request (the send path's four statements were one lookup plus three of its own).
 *
 * It must not let a revoked key keep working, so it is forgotten whole whenever a key or an
 * account's admin flag changes: at once in the process that made the change, and in every
 * replica on the `herald_keys` NOTIFY a trigger sends (migration 0012). The time limit covers the
 * one case the NOTIFY cannot: a replica whose LISTEN connection was down at that moment.
 * Unknown tokens are not remembered: a stream of wrong tokens must not fill memory, and a key
 * made a moment ago must work at once. A lookup that was under way when the cache was emptied is
 * not remembered either (it may have read the key before its revocation): `set` takes the
 * generation read before the lookup, and every `clear` starts a new one.
 *
 * Apart from the cache, it recognizes the digests of tokens that were valid here in the last
 * RECOGNIZED_TTL_MS: not a reason to trust one (that is the database's, and the cache's for
 * seconds), only to spend a lookup on it when its client address is throttled for failed
 * authentications (src/http/auth.ts), so that customers behind a shared address keep working while
 * a stranger's guesses there wait their turn. `clear` does not forget them: a revoked token is
 * still looked up (and fails, and is forgotten then).
 */
export interface CachedKey<A> {
  readonly principal: A
  /** When the key was last recorded as used, as last read or written by this process. */
  lastUsedAt: Date | null
}

/** Longest a remembered token is trusted without a look at the database. */
export const KEY_CACHE_TTL_MS = 10_000
/** More distinct tokens than any deployment uses at once: past it, the cache starts afresh. */
const MAX_ENTRIES = 10_000
/** How long a token that was valid is recognized: a day covers a client's quiet night. */
export const RECOGNIZED_TTL_MS = 24 * 60 * 60 * 1000

export const makeKeyCache = <A>() => {
  const entries = new Map<string, { readonly key: CachedKey<A>; readonly expires: number }>()
  // Digest → until when it is recognized; bounded like the cache (about 100 bytes each).
  const recognized = new Map<string, number>()
  let generation = 0
  return {
    generation: () => generation,
    get: (digest: string, now: number): CachedKey<A> | undefined => {
      const entry = entries.get(digest)
      if (entry === undefined) return undefined
      if (entry.expires > now) return entry.key
      entries.delete(digest)
      return undefined
    },
    /** Remembers `key` unless the cache was emptied since `readAt` (its generation before the lookup). */
    set: (digest: string, key: CachedKey<A>, now: number, readAt: number) => {
      if (readAt !== generation) return
      if (entries.size >= MAX_ENTRIES) entries.clear()
      entries.set(digest, { key, expires: now + KEY_CACHE_TTL_MS })
    },
    clear: () => {
      generation += 1
      entries.clear()
    },
    /** Remembers that the token of `digest` was valid at `now`. */
    recognize: (digest: string, now: number) => {
      if (recognized.size >= MAX_ENTRIES && !recognized.has(digest)) recognized.clear()
      recognized.set(digest, now + RECOGNIZED_TTL_MS)
    },
    /** True when the token of `digest` was valid here within RECOGNIZED_TTL_MS and has not failed since. */
    recognizes: (digest: string, now: number): boolean => {
      const until = recognized.get(digest)
      if (until === undefined) return false
      if (until > now) return true
      recognized.delete(digest)
      return false
    },
    /** The token of `digest` failed a lookup (revoked): no more lookups on its account. */
    unrecognize: (digest: string) => void recognized.delete(digest),
    size: () => entries.size
  }
}
