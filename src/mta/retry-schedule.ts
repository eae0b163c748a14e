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
