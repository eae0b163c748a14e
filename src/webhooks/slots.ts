/**
 * The dispatcher's attempt slots: at most `n` attempts at once, the rest waiting in line, and how
 * many are running or waiting (`busy`, what claims leave room for). Plain code rather than an
 * Effect semaphore inside acquireUseRelease: a free slot is the usual case and that pair was a
 * visible share of the CPU an attempt costs (see Dispatcher).
 */
import { Effect } from "effect"

export interface Slots {
  /** Runs `effect` in a slot; interruption while waiting leaves the line, and a held slot is always given back. */
  readonly withSlot: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Attempts running or waiting for a slot. */
  readonly busy: () => number
}

export const makeSlots = (n: number): Slots => {
  let free = n
  let busy = 0
  const line: Array<() => void> = []

  const withSlot = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    let state: "out" | "waiting" | "holding" = "out"
    const enter = Effect.suspend(() => {
      busy += 1
      if (free > 0) {
        free -= 1
        state = "holding"
        return Effect.void
      }
      state = "waiting"
      return Effect.async<void>((resume) => {
        const take = () => {
          state = "holding"
          resume(Effect.void)
        }
        line.push(take)
        return Effect.sync(() => {
          const at = line.indexOf(take)
          if (at >= 0) line.splice(at, 1)
        })
      })
    })
    const leave = Effect.sync(() => {
      if (state === "out") return
      busy -= 1
      // A slot handed to a waiter that was being interrupted is given back by that waiter.
      if (state === "holding") {
        const next = line.shift()
        if (next === undefined) free += 1
        else next()
      }
    })
    return Effect.ensuring(Effect.zipRight(enter, effect), leave)
  }

  return { withSlot, busy: () => busy }
}
