/**
 * Counts per key in fixed windows, in the process: the failure counters of Bearer authentication
 * (src/http/auth-failures.ts) and of console sign-in (src/api/console/sign-in-throttle.ts). A key
 * whose window has passed starts a new one at its next count.
 *
 * The keys are a stranger's to choose (addresses, emails), so the table is bounded: past
 * `maxEntries` the key whose window opened longest ago is forgotten (a Map iterates in insertion
 * order, and a key is inserted again when its next window opens). Each replica counts on its own:
 * a failure must not cost a write.
 */

export interface FixedWindow {
  /** When the window opened (ms since the epoch). */
  readonly start: number
  count: number
}

export const makeFixedWindows = <W extends FixedWindow>(options: {
  readonly windowMs: number
  readonly maxEntries: number
  /** A new window for a key's first count (its `count` is then set to 1). */
  readonly open: (now: number) => W
}) => {
  const table = new Map<string, W>()
  /** `key`'s window if it is still open at `now` (a passed one is dropped). */
  const current = (key: string, now: number): W | undefined => {
    const entry = table.get(key)
    if (entry === undefined || now - entry.start < options.windowMs) return entry
    table.delete(key)
    return undefined
  }
  return {
    current,
    /** Counts one for `key` at `now`, opening its window if it has none. */
    count: (key: string, now: number): void => {
      const entry = current(key, now)
      if (entry !== undefined) {
        entry.count += 1
        return
      }
      if (table.size >= options.maxEntries) table.delete(table.keys().next().value!)
      const opened = options.open(now)
      opened.count = 1
      table.set(key, opened)
    },
    forget: (key: string): void => void table.delete(key),
    size: () => table.size
  }
}
