/**
 * Messages per minute per client address at the MX listener
 * (HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP): each MAIL FROM counts against its address's current
 * one-minute window, and past the limit the transaction is refused with 451 before any DATA is
 * sent — a real MTA retries later; a flood from one address costs a line per attempt. In memory and
 * per replica (like the connection limits): what it protects is this process's memory and cores.
 */

interface Window {
  start: number
  count: number
}

const WINDOW_MS = 60_000
/** Past this many tracked addresses, windows that have ended are swept out. */
const SWEEP_AT = 10_000

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
      window = { start: now, count: 0 }
      this.windows.set(address, window)
    }
    if (window.count >= this.limit) return false
    window.count++
    return true
  }

  private sweep(now: number): void {
    for (const [address, window] of this.windows) {
      if (now - window.start >= WINDOW_MS) this.windows.delete(address)
    }
  }
}
