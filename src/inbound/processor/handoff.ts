/**
 * Messages handed from the MX listener to this replica's inbound processor in memory, so that a
 * message is not written, claimed and read back: the listener commits the row already leased to
 * the processor (`lease_owner`, `next_attempt_at` = the lease's end) and, once committed, hands
 * the processor its bytes. The processor then takes them from here instead of claiming them.
 * Measured with bench:inbound: the claim was one more row version per message (raw bytes
 * included) and the raw bytes came back as hex text to decode; see docs/benchmarks.md.
 *
 * Nothing is lost by keeping them here: the row is committed before 250, with a lease. A crash
 * (or a message this replica never gets to) lets the lease end and any replica claims the row,
 * as it would a claimed message; at shutdown what is left is given back at once (Processor.ts).
 * Bounded: at most HANDOFF_MAX messages and HANDOFF_BYTES raw bytes wait here; a message that
 * finds no room is committed unleased, for whoever claims it.
 */
import { Effect } from "effect"
import type { ClaimedInbound } from "./InboundQueue.ts"

/** A claim's lease of a message (processor and handoff alike): a replica that dies mid-parse lets it fall due again. */
export const INBOUND_LEASE_MS = 5 * 60_000
/** Messages, and raw bytes, waiting in the handoff at most (the processor takes a batch at a time). */
export const HANDOFF_MAX = 256
export const HANDOFF_BYTES = 16 * 1024 * 1024

/** Room taken for one message before its row is committed: handed over on commit, or given back. */
export interface HandoffTicket {
  /** The processor's lease owner, to commit the row with. */
  readonly owner: string
  readonly size: number
  settled: boolean
}

export class InboundHandoff extends Effect.Service<InboundHandoff>()("herald/InboundHandoff", {
  sync: () => {
    let owner: string | undefined
    let waiting: Array<ClaimedInbound> = []
    /** Bytes of the messages waiting and of those with a ticket not yet settled. */
    let bytes = 0
    let count = 0

    /** Room for a message of `size` bytes, when the processor is taking messages and there is room. */
    const reserve = (size: number): HandoffTicket | undefined => {
      if (owner === undefined || count >= HANDOFF_MAX || bytes + size > HANDOFF_BYTES) return undefined
      count += 1
      bytes += size
      return { owner, size, settled: false }
    }
    /** The message's row is committed, leased to the ticket's owner: the processor may take it. */
    const handOver = (ticket: HandoffTicket, message: ClaimedInbound) => {
      if (ticket.settled) return
      ticket.settled = true
      // The processor stopped (or restarted under another owner) meanwhile: the lease ends on its own.
      if (owner !== ticket.owner) return release(ticket.size)
      waiting.push(message)
    }
    /** The row was not committed (or not with this lease): the room goes back. */
    const giveBack = (ticket: HandoffTicket) => {
      if (ticket.settled) return
      ticket.settled = true
      release(ticket.size)
    }
    const release = (size: number) => {
      count -= 1
      bytes -= size
    }

    /** Up to `limit` waiting messages, oldest first, and past the first no more than `maxBytes` in all. */
    const take = (limit: number, maxBytes: number): ReadonlyArray<ClaimedInbound> => {
      let n = 0
      let taken = 0
      while (n < waiting.length && n < limit) {
        const size = waiting[n]!.raw?.length ?? 0
        if (n > 0 && taken + size > maxBytes) break
        taken += size
        n += 1
      }
      if (n === 0) return []
      const batch = waiting.slice(0, n)
      waiting = waiting.slice(n)
      for (const message of batch) release(message.raw?.length ?? 0)
      return batch
    }

    return {
      reserve,
      handOver,
      giveBack,
      take,
      /** The processor takes handed-over messages from now on, leased as `by`. */
      open: (by: string) => void (owner = by),
      /** The processor stops: no more tickets; answers the ids still waiting (leased to it), to give back. */
      close: (): ReadonlyArray<string> => {
        owner = undefined
        const left = waiting.map((message) => message.id)
        for (const message of waiting) release(message.raw?.length ?? 0)
        waiting = []
        return left
      },
      waitingCount: () => waiting.length
    }
  }
}) {}
