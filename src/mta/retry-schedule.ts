/**
 * When a deferred delivery is tried again (pure). Like Postfix's queue, waits grow and then level
 * off, over days rather than minutes, until the maximum age (HERALD_QUEUE_MAX_AGE_HOURS, 5 days
 * by default, Postfix's maximal_queue_lifetime) — then the delivery fails (email.failed), never
 * silently dropped.
 *
 *   attempt made | 1    2     3     4    5    6    7    8 and on
 *   next after   | 5 m  10 m  20 m  40 m 1 h  2 h  4 h  8 h
 */
const MINUTE = 60_000
const STEPS = [5, 10, 20, 40, 60, 120, 240, 480].map((m) => m * MINUTE)

/** The wait after `attempts` attempts (1 = the first failed). */
export const retryDelayMs = (attempts: number): number => STEPS[Math.min(Math.max(attempts, 1), STEPS.length) - 1]!

/** Whether a delivery first queued at `queuedAt` is past the maximum age at `now`. */
export const isExpired = (queuedAt: Date, now: Date, maxAgeMs: number): boolean => now.getTime() - queuedAt.getTime() >= maxAgeMs

/**
 * Claims in a row that may end with no outcome before a delivery is given up: each such claim is
 * an attempt during which the process died (or the attempt itself crashed) and the lease ran out.
 * A message that does that five times is taken to be the cause, and fails rather than taking the
 * MTA down again at every lease expiry.
 */
export const MAX_CLAIMS_WITHOUT_OUTCOME = 5

/** Why a delivery claimed `claims` times since its last outcome (this claim included) is given up, or null. */
export const abandonedReason = (claims: number): string | null =>
  claims > MAX_CLAIMS_WITHOUT_OUTCOME
    ? `delivery abandoned after ${claims - 1} claims without an outcome (each attempt ended with no result, as when the process stops during it)`
    : null
