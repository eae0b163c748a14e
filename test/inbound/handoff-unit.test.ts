/**
 * The listener's in-memory handoff to the processor (src/inbound/processor/handoff.ts): bounded
 * by messages and bytes, nothing handed over to a processor that has stopped, and what is waiting
 * when it stops comes back as ids to give back to the database.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { HANDOFF_BYTES, HANDOFF_MAX, InboundHandoff } from "../../src/inbound/processor/handoff.ts"

const make = () => Effect.runSync(Effect.provide(InboundHandoff, InboundHandoff.Default))
const message = (id: string, size: number) => ({ id, rcpt_to: ["dmarc@bounces.test"], mail_from: "", raw: Buffer.alloc(size), attempts: 0 })

describe("the inbound handoff", () => {
  it("takes nothing before the processor opens it, and nothing after it closes", () => {
    const handoff = make()
    expect(handoff.reserve(10)).toBeUndefined()
    handoff.open("owner-1")
    const ticket = handoff.reserve(10)!
    expect(ticket.owner).toBe("owner-1")
    expect(handoff.close()).toEqual([])
    // Committed after the processor stopped: not kept (its lease ends on its own), its room freed.
    handoff.handOver(ticket, message("inb_late", 10))
    expect(handoff.waitingCount()).toBe(0)
    handoff.open("owner-2")
    expect(handoff.take(10, 1_000)).toEqual([])
  })

  it("holds at most HANDOFF_MAX messages and HANDOFF_BYTES bytes; room comes back as messages are taken or given back", () => {
    const handoff = make()
    handoff.open("o")
    const tickets = Array.from({ length: HANDOFF_MAX }, () => handoff.reserve(1))
    expect(tickets.every((t) => t !== undefined)).toBe(true)
    expect(handoff.reserve(1)).toBeUndefined()
    handoff.giveBack(tickets[0]!)
    handoff.giveBack(tickets[0]!) // settled once
    expect(handoff.reserve(1)).toBeDefined()
    expect(handoff.reserve(1)).toBeUndefined()
    tickets.slice(1).forEach((t, i) => handoff.handOver(t!, message(`inb_${i}`, 1)))
    expect(handoff.take(HANDOFF_MAX, HANDOFF_BYTES)).toHaveLength(HANDOFF_MAX - 1)
    // One ticket (1 byte) is still out: the bytes left are HANDOFF_BYTES - 1.
    expect(handoff.reserve(HANDOFF_BYTES)).toBeUndefined()
    expect(handoff.reserve(HANDOFF_BYTES - 1)).toBeDefined()
    expect(handoff.reserve(1)).toBeUndefined()
  })

  it("hands out oldest first, up to a count and, past the first, a byte budget; close answers what waits", () => {
    const handoff = make()
    handoff.open("o")
    for (const [id, size] of [["a", 600], ["b", 600], ["c", 10], ["d", 10]] as const) handoff.handOver(handoff.reserve(size)!, message(id, size))
    expect(handoff.take(10, 500).map((m) => m.id)).toEqual(["a"]) // always at least one
    expect(handoff.take(10, 615).map((m) => m.id)).toEqual(["b", "c"])
    expect(handoff.close()).toEqual(["d"])
    expect(handoff.waitingCount()).toBe(0)
  })
})
