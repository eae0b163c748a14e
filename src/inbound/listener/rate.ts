/**
 * Messages per minute per client address at the MX listener
 * (HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP): each MAIL FROM counts against its address's current
 * one-minute window, and past the limit the transaction is refused with 451 before any DATA is
 * sent — a real MTA retries later; a flood from one address costs a line per attempt.
 *
 * The limit is the whole appliance's (issue 33): every SYNC_MS each process adds what it admitted
 * since its last sync to the address's window in PostgreSQL (`counter_windows`, one statement for
 * all its addresses: src/db/counter-windows.ts) and reads the totals every process has admitted
 * for the addresses it saw in the last minute (one more statement).
 * A MAIL FROM is decided in memory against that total plus this process's own admissions since —
 * no round trip on the listener's path. What N processes can admit beyond the limit is what the
 * others admitted within one sync (at most SYNC_MS of their rate); one process alone holds it
 * exactly, as before.
 */
import { Effect } from "effect"
import { countEvents, readWindows } from "../../db/counter-windows.ts"

interface Window {
  /** This process's own window: it holds the limit exactly between syncs. */
  start: number
  count: number
  /** Admitted here and not yet added to the shared window. */
  unsynced: number
  /** The shared window's end and its count at the last sync (0: none known). */
  sharedEnd: number
  sharedCount: number
}

const WINDOW_MS = 60_000
/** How often a process adds its admissions to the shared windows (and reads the totals). */
export const SYNC_MS = 1_000
/** Past this many tracked addresses, windows that have ended are swept out. */
const SWEEP_AT = 10_000
/** The holder of an address's messages in `counter_windows`. */
const holderOf = (address: string) => `mx:${address}`

export class MessageRate {
  private readonly windows = new Map<string, Window>()
  private readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** Counts one message from `address` at `now` (epoch ms); false when it is over the limit. */
  admit(address: string, now: number): boolean {
    let window = this.windows.get(address)
    if (window === undefined || now - window.start >= WINDOW_MS) {
      if (window === undefined && this.windows.size >= SWEEP_AT) this.sweep(now)
      window = { start: now, count: 0, unsynced: window?.unsynced ?? 0, sharedEnd: window?.sharedEnd ?? 0, sharedCount: window?.sharedCount ?? 0 }
      this.windows.set(address, window)
    }
    if (window.count >= this.limit) return false
    if (window.sharedEnd > now && window.sharedCount + window.unsynced >= this.limit) return false
    window.count++
    window.unsynced++
    return true
  }

  /**
   * Adds the admissions since the last sync to the shared windows, and reads the totals of every
   * address this process admitted within the last minute (others' admissions count against it
   * too); an address with nothing new is read, not written. A failed write keeps its admissions
   * for the next sync.
   */
  sync(now: number) {
    const active = [...this.windows].filter(([, w]) => now - w.start < WINDOW_MS || w.unsynced > 0)
    if (active.length === 0) return Effect.void
    const taken = active.filter(([, w]) => w.unsynced > 0).map(([address, w]) => [address, w.unsynced] as const)
    const quiet = active.filter(([, w]) => w.unsynced === 0).map(([address]) => holderOf(address))
    for (const [, w] of active) w.unsynced = 0
    const written = taken.length === 0 ? Effect.succeed([]) : countEvents(taken.map(([address, n]) => [holderOf(address), n]), now, WINDOW_MS).pipe(
      Effect.tapError(() =>
        Effect.sync(() => {
          for (const [address, n] of taken) {
            const window = this.windows.get(address)
            if (window !== undefined) window.unsynced += n
          }
        })
      )
    )
    const read = quiet.length === 0 ? Effect.succeed([]) : readWindows(quiet, now)
    return Effect.all([written, read]).pipe(
      Effect.map(([a, b]) => {
        const byHolder = new Map([...a, ...b].map((row) => [row.holder, row]))
        for (const [address, window] of active) {
          const shared = byHolder.get(holderOf(address))
          window.sharedEnd = shared?.end ?? 0
          window.sharedCount = shared?.count ?? 0
        }
      })
    )
  }

  private sweep(now: number): void {
    for (const [address, window] of this.windows) {
      if (now - window.start >= WINDOW_MS && window.sharedEnd <= now && window.unsynced === 0) this.windows.delete(address)
    }
  }
}
