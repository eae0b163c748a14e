/**
 * The tracking endpoints' memory of the tokens they logged lately (issue 26 "Unauthenticated
 * endpoints cost a bounded amount"): a fetch of a token less than the repeat window after the one
 * this replica logged is answered (the pixel, the redirect) and not logged at all, so replaying
 * one token costs a signature check and no write. The aggregator applies the same rule to what
 * reaches it (windows.ts), over every replica and across restarts; this memory only spares the
 * log the repeats it can see. With several replicas, each remembers its own hits: a token
 * replayed through two of them is logged by each and counted by the aggregator's rule.
 *
 * Keys are per token and opener class (machine-opens.ts), as in the aggregator: a proxy's prefetch
 * must not hide the person's open that follows it (`opens_unique` would lose them).
 *
 * No per-address rate: behind an image proxy (Gmail, Yahoo) or a reverse proxy many people share
 * one address, and a token's first fetch in its window must always be recorded; repeats, the only
 * hits such a rate could drop, are already dropped here whatever their address.
 *
 * Bounded: entries live one window and at most REMEMBERED_TOKENS are kept; past that the oldest
 * is forgotten, and a repeat of it is logged and left to the aggregator, which does not count it.
 */

/** Tokens remembered at most (~150 bytes each: ~7 MB); 50,000 first fetches per window is a large campaign's peak. */
export const REMEMBERED_TOKENS = 50_000

export class RecentTokens {
  /** Key → when it was last let through; insertion order is time order (a key let through again moves to the end). */
  private readonly seen = new Map<string, number>()

  constructor(readonly windowMs: number, readonly capacity: number = REMEMBERED_TOKENS) {}

  /**
   * True when `key` was let through less than the window before `nowMs` (a repeat: answer, do not
   * log). Otherwise remembers `nowMs` for it and answers false.
   */
  isRepeat(key: string, nowMs: number): boolean {
    // The oldest first, so expiring stops at the first live entry: amortised O(1) per call.
    for (const [oldest, at] of this.seen) {
      if (nowMs - at < this.windowMs) break
      this.seen.delete(oldest)
    }
    const last = this.seen.get(key)
    if (last !== undefined && Math.abs(nowMs - last) < this.windowMs) return true
    this.seen.delete(key)
    this.seen.set(key, nowMs)
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.keys().next().value!)
    return false
  }

  /** Forgets `key` let through at `atMs` (its logging failed: the next fetch must be logged). */
  forget(key: string, atMs: number): void {
    if (this.seen.get(key) === atMs) this.seen.delete(key)
  }

  get size(): number {
    return this.seen.size
  }
}

/** The key of a token and opener class, here and in the aggregator's windows (link -1 is the pixel). */
export const tokenKey = (deliveryId: string, linkIndex: number | null, machine: boolean): string =>
  `${deliveryId} ${linkIndex ?? -1} ${machine ? "m" : "p"}`
