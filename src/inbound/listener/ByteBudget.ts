/**
 * The bytes of inbound messages the MX listener may hold in memory at once, across every
 * connection (HERALD_SMTP_INBOUND_BUDGET_MB): a session reserves each piece of a message before it
 * keeps it and releases it once the piece is in PostgreSQL. A session that finds no room waits —
 * it stops reading its socket, so TCP holds the sender back — in arrival order, and is refused
 * (451) if no room comes within its wait. The bytes stored are not counted: only those in flight.
 *
 * Plain callbacks, not fibers: the listener's sessions are smtp-server callbacks, and a reservation
 * per socket read must cost next to nothing.
 */

interface Waiter {
  readonly bytes: number
  readonly grant: (granted: boolean) => void
}

export class ByteBudget {
  readonly capacity: number
  private used = 0
  private highest = 0
  private readonly waiters: Array<Waiter> = []

  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity))
  }

  /** Bytes reserved now, and the most ever reserved at once. */
  get inUse(): number {
    return this.used
  }
  get peak(): number {
    return this.highest
  }

  /**
   * What reserving `bytes` costs: a single piece larger than the whole budget is charged as the
   * whole budget, so that it can still pass once everything else is released (it then holds the
   * budget alone). Callers add up charges to know what to release.
   */
  charge(bytes: number): number {
    return Math.min(Math.max(0, bytes), this.capacity)
  }

  /** Reserves at once if there is room and nobody waits before us; false otherwise. */
  tryAcquire(bytes: number): boolean {
    const charged = this.charge(bytes)
    if (this.waiters.length > 0 || this.used + charged > this.capacity) return false
    this.take(charged)
    return true
  }

  /** Reserves, waiting in line for up to `waitMs`; resolves false (nothing reserved) if no room came. */
  acquire(bytes: number, waitMs: number): Promise<boolean> {
    if (this.tryAcquire(bytes)) return Promise.resolve(true)
    const charged = this.charge(bytes)
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        bytes: charged,
        grant: (granted) => {
          clearTimeout(timer)
          resolve(granted)
        }
      }
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter)
        if (index < 0) return
        this.waiters.splice(index, 1)
        waiter.grant(false)
        // The one that gave up may have been first in line, holding back smaller ones behind it.
        this.wake()
      }, waitMs)
      this.waiters.push(waiter)
    })
  }

  /** Gives back `charged` bytes (a sum of `charge`s of what was reserved), waking those in line. */
  release(charged: number): void {
    this.used = Math.max(0, this.used - charged)
    this.wake()
  }

  private take(charged: number): void {
    this.used += charged
    if (this.used > this.highest) this.highest = this.used
  }

  private wake(): void {
    while (this.waiters.length > 0 && this.used + this.waiters[0]!.bytes <= this.capacity) {
      const waiter = this.waiters.shift()!
      this.take(waiter.bytes)
      waiter.grant(true)
    }
  }
}
