/**
 * The outbound MTA's scheduling decisions (src/mta/mta-state.ts), as tables: each row a state and
 * an input, and the claim, the state and the actions that follow. Concurrency 100 throughout
 * unless a row says otherwise: bulk may hold 80 attempts, claims with work in hand wait for 25
 * free places.
 */
import { describe, expect, it } from "vitest"
import {
  attemptEnded,
  type Claim,
  claimed,
  claimsMade,
  type Connections,
  gatherBeforeClaim,
  initialMtaState,
  leftDestination,
  type MtaAction,
  type MtaState,
  planClaim,
  POLL_MS,
  signalled,
  SKIP_RECHECK_MS,
  skipListRead,
  skipListStale
} from "../../src/mta/mta-state.ts"
import type { Channel } from "../../src/mta/queue/StoredMessage.ts"

const NOW = 1_000_000
const MB = 1024 * 1024

let serial = 0
const delivery = (channel: Channel, domain = "example.com", overrides: Partial<Claim> = {}): Claim => {
  serial += 1
  return { id: `d${serial}`, message_id: `m${serial}`, channel, recipient_domain: domain, content_bytes: 1_000, ...overrides }
}
const many = (n: number, channel: Channel, domain?: string) => Array.from({ length: n }, () => delivery(channel, domain))

/** Every site gives each lane `n` connections: a domain runs 2n attempts, the others wait in its ready line. */
const connections = (n: number): Connections => () => n

interface Given {
  readonly concurrency?: number
  readonly budgetBytes?: number
  /** Attempts already in hand (admitted with plenty of connections, so running). */
  readonly transactional?: number
  readonly bulk?: number
  readonly transactionalDue?: boolean
  /** How long ago the last transactional claim was made. */
  readonly claimedAgoMs?: number
  readonly bulkBacklog?: boolean
}

const given = (g: Given = {}): MtaState => {
  let s: MtaState = {
    ...initialMtaState(g.concurrency ?? 100, g.budgetBytes ?? 64 * MB),
    transactionalDue: g.transactionalDue ?? true,
    transactionalClaimedAt: g.claimedAgoMs === undefined ? Number.NEGATIVE_INFINITY : NOW - g.claimedAgoMs,
    bulkBacklog: g.bulkBacklog ?? false
  }
  // In hand on their own domains, so they never take a place in the rows' domain lines.
  s = claimed(s, "transactional", -1, many(g.transactional ?? 0, "transactional", "busy.example"), connections(1_000)).state
  s = claimed(s, "bulk", -1, many(g.bulk ?? 0, "bulk", "busy.example"), connections(1_000)).state
  return { ...s, transactionalDue: g.transactionalDue ?? true, bulkBacklog: g.bulkBacklog ?? false }
}

const tags = (actions: ReadonlyArray<MtaAction>) => actions.map((a) => (a._tag === "Start" ? `Start ${a.delivery.id}` : a._tag === "GiveBack" ? `GiveBack ${a.ids.join(",")}` : a._tag))
const lines = (s: MtaState) => Object.fromEntries([...s.ready].map(([key, line]) => [key, line.length]))
const runningIn = (s: MtaState, key: string) => s.running.get(key)?.size ?? 0

describe("what each lane claims", () => {
  it.each<[string, Given, Channel, number]>([
    ["an idle MTA claims every place for transactional sends", {}, "transactional", 100],
    ["an idle MTA claims bulk up to its share (80 of 100)", {}, "bulk", 80],
    ["a transactional claim is not made when none is due and the last was under a poll ago", { transactionalDue: false, claimedAgoMs: POLL_MS - 1 }, "transactional", 0],
    ["a transactional claim is made at the poll even when not signalled", { transactionalDue: false, claimedAgoMs: POLL_MS }, "transactional", 100],
    ["with transactional work in hand, a transactional claim waits for 25 free places", { transactional: 80 }, "transactional", 0],
    ["with transactional work in hand and 25 places free, the claim takes them all", { transactional: 75 }, "transactional", 25],
    ["bulk in hand at its ceiling leaves the whole rest to a transactional claim", { bulk: 80 }, "transactional", 20],
    ["bulk at its ceiling claims no more bulk", { bulk: 80 }, "bulk", 0],
    ["bulk with work in hand waits for 25 free places of its share", { bulk: 60 }, "bulk", 0],
    ["bulk with 25 places of its share free claims them", { bulk: 55 }, "bulk", 25],
    ["bulk with none in hand claims what transactional left, however little", { transactional: 95 }, "bulk", 5],
    ["a full MTA claims nothing for either lane", { transactional: 100 }, "bulk", 0],
    ["a one-place MTA lets bulk take its one place", { concurrency: 1 }, "bulk", 1]
  ])("%s", (_name, g, lane, limit) => {
    expect(planClaim(given(g), lane, NOW).limit).toBe(limit)
  })

  it.each<[string, Given, boolean]>([
    ["a claim skipped because every place is taken says more may be waiting", { transactional: 100 }, true],
    ["a claim skipped while places are free does not", { transactional: 80 }, false]
  ])("%s", (_name, g, more) => {
    expect(planClaim(given(g), "transactional", NOW)).toMatchObject({ limit: 0, more })
  })

  it("a transactional claim made is no longer due, and is timed for the poll", () => {
    expect(planClaim(given(), "transactional", NOW).state).toMatchObject({ transactionalDue: false, transactionalClaimedAt: NOW })
  })

  it("a send signalled makes a transactional claim due and wakes the loop", () => {
    const t = signalled(given({ transactionalDue: false, claimedAgoMs: 10 }))
    expect(t.state.transactionalDue).toBe(true)
    expect(tags(t.actions)).toEqual(["Wake"])
  })

  it.each<[string, number, boolean]>([
    ["the skip list read just now is kept", SKIP_RECHECK_MS - 1, false],
    ["the skip list is read again after a second", SKIP_RECHECK_MS, true]
  ])("%s", (_name, ago, stale) => {
    expect(skipListStale(skipListRead(given(), ["paused.example"], NOW - ago), NOW)).toBe(stale)
  })
})

describe("backlog flags after claims", () => {
  it.each<[string, Given, Channel, number, number, Partial<MtaState>, boolean]>([
    ["a full bulk claim marks a bulk backlog", {}, "bulk", 80, 80, { bulkBacklog: true }, true],
    ["a short bulk claim clears the bulk backlog", { bulkBacklog: true }, "bulk", 80, 30, { bulkBacklog: false }, false],
    ["a full transactional claim keeps transactional claims due", { transactionalDue: false }, "transactional", 10, 10, { transactionalDue: true }, true],
    ["a short transactional claim leaves them not due", { transactionalDue: false }, "transactional", 10, 3, { transactionalDue: false }, false],
    ["a transactional claim leaves the bulk backlog as it was", { bulkBacklog: true }, "transactional", 10, 3, { bulkBacklog: true }, false]
  ])("%s", (_name, g, lane, limit, got, expected, more) => {
    const t = claimed(given(g), lane, limit, many(got, lane), connections(100))
    expect(t.state).toMatchObject(expected)
    expect(t.more).toBe(more)
  })

  it.each<[string, Given, boolean, boolean, boolean, boolean]>([
    // The 80-per-second ceiling: a bulk claim skipped while its share refilled cleared the flag,
    // so the next attempts to end woke nobody and the bulk lane waited for the one-second poll.
    ["a skipped bulk claim keeps the bulk backlog, so attempts that end wake the loop", { bulk: 60, bulkBacklog: true, transactionalDue: false }, false, false, true, false],
    ["no claim full, no backlog and room free: no backlog", { bulk: 10, transactionalDue: false }, false, false, false, false],
    ["a full transactional claim sets the backlog", { transactionalDue: false }, true, false, true, false],
    ["a full bulk claim sets the backlog", { transactionalDue: false }, false, true, true, false],
    ["fewer than 25 places free sets the backlog", { transactional: 80, transactionalDue: false }, false, false, true, false],
    ["a transactional claim still due with places free claims again at once", { transactional: 10 }, true, false, true, true],
    ["a transactional claim due with no place free waits", { transactional: 100 }, true, false, true, false]
  ])("%s", (_name, g, transactionalMore, bulkMore, backlog, more) => {
    const made = claimsMade(given(g), transactionalMore, bulkMore)
    expect(made.state.backlog).toBe(backlog)
    expect(made.more).toBe(more)
  })

  it("the bulk backlog survives the claims that wait for their share, and wakes the loop as attempts end", () => {
    // Bulk full: 80 in hand after a full claim; 20 end (fewer than 25 free in its share: no claim).
    const ds = many(80, "bulk", "campaign.example")
    const full = claimed(given({ transactionalDue: false, claimedAgoMs: 0 }), "bulk", 80, ds, connections(100)).state
    const s = attemptEnded(full, ds[0]!, false, connections(100)).state
    const plan = planClaim(s, "bulk", NOW)
    expect(plan.limit).toBe(0)
    const made = claimsMade(plan.state, false, plan.more)
    expect(made.state).toMatchObject({ bulkBacklog: true, backlog: true })
    expect(tags(attemptEnded(made.state, ds[1]!, false, connections(100)).actions)).toEqual(["Wake"])
  })

  it.each<[string, Given, boolean]>([
    ["transactional work in hand gathers the next moment's sends into one claim", { transactional: 1 }, true],
    ["bulk work in hand does not delay a transactional claim", { bulk: 50 }, false]
  ])("%s", (_name, g, gather) => {
    expect(gatherBeforeClaim(given(g))).toBe(gather)
  })
})

describe("which claimed delivery starts and which waits", () => {
  it.each<[string, ReadonlyArray<Claim>, number, Record<string, number>, Record<string, number>]>([
    ["a domain runs twice its connections; the rest wait in its ready line", many(7, "bulk", "a.example"), 2, { "bulk a.example": 4 }, { "bulk a.example": 3 }],
    ["each domain has its own line", [...many(3, "bulk", "a.example"), ...many(3, "bulk", "b.example")], 1, { "bulk a.example": 2, "bulk b.example": 2 }, { "bulk a.example": 1, "bulk b.example": 1 }],
    ["a transactional send does not queue behind bulk ones of the same domain", [...many(5, "bulk", "a.example"), delivery("transactional", "a.example")], 1, { "bulk a.example": 2, "transactional a.example": 1 }, { "bulk a.example": 3 }]
  ])("%s", (_name, deliveries, n, running, ready) => {
    const t = claimed(given(), "bulk", 100, deliveries, connections(n))
    for (const [key, count] of Object.entries(running)) expect(runningIn(t.state, key), key).toBe(count)
    expect(lines(t.state)).toEqual(ready)
    expect(t.actions.filter((a) => a._tag === "Start")).toHaveLength(Object.values(running).reduce((a, b) => a + b, 0))
    expect(t.state.inHand.size).toBe(deliveries.length)
    expect(t.state.bulkInHand).toBe(deliveries.filter((d) => d.channel === "bulk").length)
  })

  it.each<[string, ReadonlyArray<[Channel, number]>, ReadonlyArray<boolean>]>([
    ["messages start while their bytes fit the budget", [["bulk", 4 * MB], ["bulk", 4 * MB]], [true, true]],
    ["a message that does not fit waits, and so do the bulk ones after it", [["bulk", 6 * MB], ["bulk", 6 * MB], ["bulk", 1]], [true, false, false]],
    ["a transactional send does not wait behind bulk messages for budget room", [["bulk", 6 * MB], ["bulk", 6 * MB], ["transactional", 1]], [true, false, true]],
    ["a message larger than the whole budget goes alone", [["bulk", 50 * MB]], [true]]
  ])("%s (budget 10 MB)", (_name, sizes, started) => {
    const deliveries = sizes.map(([channel, bytes]) => delivery(channel, "a.example", { content_bytes: bytes }))
    const t = claimed(given({ budgetBytes: 10 * MB }), "bulk", 100, deliveries, connections(100))
    expect(deliveries.map((d) => t.actions.some((a) => a._tag === "Start" && a.delivery.id === d.id))).toEqual(started)
    expect(t.state.overBudget.map((d) => d.id)).toEqual(deliveries.filter((_, i) => !started[i]).map((d) => d.id))
  })
})

describe("when an attempt leaves its destination or ends", () => {
  /** Four bulk deliveries to a.example with one connection: two running, two ready. */
  const busy = () => {
    const ds = many(4, "bulk", "a.example")
    return { ds, s: claimed(given(), "bulk", 100, ds, connections(1)).state }
  }

  it.each<[string, boolean, ReadonlyArray<string>, number, number]>([
    ["leaving the destination starts the next ready delivery of the domain", false, ["Start 2"], 2, 1],
    ["a refusal gives the ready ones back with it, in one statement", true, ["GiveBack 2,3"], 1, 0]
  ])("%s", (_name, refused, actions, running, ready) => {
    const { ds, s } = busy()
    const t = leftDestination(s, ds[0]!, refused)
    const id = (i: number) => ds[i]!.id
    expect(tags(t.actions)).toEqual(actions.map((a) => a.replace(/\d+/g, (i) => id(Number(i)))))
    expect(runningIn(t.state, "bulk a.example")).toBe(running)
    expect(t.state.ready.get("bulk a.example")?.length ?? 0).toBe(ready)
    expect(t.state.inHand.size).toBe(refused ? 2 : 4)
    expect(t.state.bulkInHand).toBe(refused ? 2 : 4)
  })

  it("leaving twice changes nothing the second time", () => {
    const { ds, s } = busy()
    const once = leftDestination(s, ds[0]!, false).state
    expect(leftDestination(once, ds[0]!, false)).toEqual({ state: once, actions: [] })
  })

  it.each<[string, boolean, ReadonlyArray<string>, number]>([
    ["an attempt that ends gives its place to the next ready one", false, ["Start 2"], 3],
    ["an attempt interrupted at shutdown starts nothing new", true, [], 3]
  ])("%s", (_name, interrupted, actions, inHand) => {
    const { ds, s } = busy()
    const t = attemptEnded(s, ds[0]!, interrupted, connections(1))
    expect(tags(t.actions)).toEqual(actions.map((a) => a.replace(/\d+/g, (i) => ds[Number(i)]!.id)))
    expect(t.state.inHand.size).toBe(inHand)
    expect(t.state.inHand.has(ds[0]!.id)).toBe(false)
  })

  it("an attempt that ends after leaving starts no second delivery", () => {
    const { ds, s } = busy()
    const left = leftDestination(s, ds[0]!, false).state
    expect(tags(attemptEnded(left, ds[0]!, false, connections(1)).actions)).toEqual([])
  })

  it.each<[string, boolean, ReadonlyArray<string>]>([
    ["room freed admits the message that waited for it", false, ["Start 1"]],
    ["room freed at shutdown admits nothing", true, []]
  ])("%s", (_name, interrupted, actions) => {
    const ds = [delivery("bulk", "a.example", { content_bytes: 8 * MB }), delivery("bulk", "b.example", { content_bytes: 8 * MB })]
    const s = claimed(given({ budgetBytes: 10 * MB }), "bulk", 100, ds, connections(10)).state
    expect(s.overBudget).toHaveLength(1)
    const t = attemptEnded(s, ds[0]!, interrupted, connections(10))
    expect(tags(t.actions)).toEqual(actions.map((a) => a.replace(/\d+/g, (i) => ds[Number(i)]!.id)))
    expect(t.state.budget.used).toBe(interrupted ? 0 : 8 * MB)
  })

  it("an attempt that ends with a backlog wakes the loop to claim", () => {
    const { ds, s } = busy()
    expect(tags(attemptEnded({ ...s, backlog: true }, ds[0]!, false, connections(1)).actions)).toEqual([`Start ${ds[2]!.id}`, "Wake"])
  })

  it("a transition leaves the state it was given as it was", () => {
    const { ds, s } = busy()
    const before = JSON.stringify({ ...s, inHand: [...s.inHand], running: [...s.running].map(([k, v]) => [k, [...v]]), ready: [...s.ready] })
    leftDestination(s, ds[0]!, true)
    attemptEnded(s, ds[1]!, false, connections(1))
    expect(JSON.stringify({ ...s, inHand: [...s.inHand], running: [...s.running].map(([k, v]) => [k, [...v]]), ready: [...s.ready] })).toBe(before)
  })
})
