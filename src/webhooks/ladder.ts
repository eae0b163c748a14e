/**
 * The retry ladder of a webhook delivery (spec "Retries", DESIGN "Webhook ladder"), pure:
 *
 *   attempt 1          the first delivery
 *   attempts 2–4       an in-process burst: 1 s, 5 s and 25 s after the first failure
 *   attempts 5–11      queued (in the database, so they survive restarts): 5 min, 30 min, 2 h,
 *                      6 h, then 24 h three times — the spec's "24 h ×3" read as three tries a day
 *                      apart, so a receiver gets three days to come back
 *   after attempt 11   failed (dead letter), kept in the history
 */
const SECOND = 1_000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

const BURST = [1 * SECOND, 5 * SECOND, 25 * SECOND]
const QUEUED = [5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR, 24 * HOUR, 24 * HOUR]

export const MAX_ATTEMPTS = 1 + BURST.length + QUEUED.length

/**
 * When burst retry number `attemptsMade` (1–3) is due, measured from the first failure: 1 s, 5 s
 * and 25 s after it, however long the attempts between took (an attempt already past its time
 * goes at once). Null past the burst.
 */
export const burstOffsetMs = (attemptsMade: number): number | null => BURST[attemptsMade - 1] ?? null

export type NextStep =
  | { readonly _tag: "burst"; readonly delayMs: number }
  | { readonly _tag: "queued"; readonly delayMs: number }
  | { readonly _tag: "dead" }

/** After `attemptsMade` failed attempts, what happens next. */
export const nextStep = (attemptsMade: number): NextStep => {
  const index = attemptsMade - 1
  if (index < 0) return { _tag: "burst", delayMs: 0 }
  if (index < BURST.length) {
    // The burst waits are measured from the first failure: 1 s, 5 s, 25 s after it.
    return { _tag: "burst", delayMs: BURST[index]! - (index === 0 ? 0 : BURST[index - 1]!) }
  }
  const queued = index - BURST.length
  return queued < QUEUED.length ? { _tag: "queued", delayMs: QUEUED[queued]! } : { _tag: "dead" }
}
