/**
 * The webhook dispatcher's scheduling decisions (src/webhooks/dispatch-state.ts), as tables: each
 * row a state and an input, and the lanes, flags and actions that follow. 32 attempts at once, 4
 * workers a key, lanes of at most 64 leased deliveries and 512 in all.
 */
import { describe, expect, it } from "vitest"
import {
  afterRefill,
  attempted,
  BATCH,
  claimed,
  CONCURRENCY,
  type DispatchAction,
  type DispatchState,
  FAN_OUT_BATCH,
  failing,
  fannedOut,
  type Held,
  initialDispatchState,
  LANE_CAP,
  LANE_IDLE_MS,
  type LaneState,
  laneOf,
  LEASE_MARGIN_MS,
  LEASE_MS,
  LOW_WATER,
  PER_KEY,
  planClaim,
  POLL_MS,
  pruneIdle,
  QUEUED_CAP,
  refilled,
  refillSize,
  roomAhead,
  signalled,
  slotFreed,
  workerInterrupted,
  workerLeft,
  workerNext
} from "../../src/webhooks/dispatch-state.ts"

const NOW = 10_000_000

let serial = 0
const held = (keyId: string): Held => ({ id: `w${++serial}`, key_id: keyId })
const many = (n: number, keyId: string) => Array.from({ length: n }, () => held(keyId))

/** A state with one lane per entry (its queue of `queued` deliveries leased at `leasedAt`). */
const given = (lanes: Record<string, Partial<LaneState<Held>> & { queued?: number; leasedAt?: number }> = {}, rest: Partial<DispatchState> = {}): DispatchState => {
  const map = new Map<string, LaneState<Held>>()
  let queued = 0
  for (const [keyId, { queued: n = 0, leasedAt = NOW, ...lane }] of Object.entries(lanes)) {
    map.set(keyId, { workers: 0, healthy: false, refilling: false, backlog: true, idleSince: 0, ...lane, queue: many(n, keyId).map((delivery) => ({ delivery, leasedAt })) })
    queued += n
  }
  return { ...initialDispatchState(), lanes: map, queued, ...rest }
}

const tags = (actions: ReadonlyArray<DispatchAction>) =>
  actions.map((a) => a._tag === "StartWorkers" ? `StartWorkers ${a.keyId} ${a.n}` : a._tag === "GiveBack" ? `GiveBack ${a.deliveries.length}` : a._tag)

describe("the fan-out's new deliveries", () => {
  it.each<[string, DispatchState, ReadonlyArray<Held>, number, ReadonlyArray<string>]>([
    ["an idle key gets workers for what was leased, up to PER_KEY", given(), many(10, "k"), 0, [`StartWorkers k ${PER_KEY}`]],
    ["one delivery gets one worker", given(), many(1, "k"), 0, ["StartWorkers k 1"]],
    ["a lane with all its workers gets no more", given({ k: { workers: PER_KEY } }), many(5, "k"), 0, []],
    ["a lane with one worker gets up to PER_KEY", given({ k: { workers: 1 } }), many(5, "k"), 0, [`StartWorkers k ${PER_KEY - 1}`]],
    ["a lane with a worker gets none while every slot is busy", given({ k: { workers: 1 } }), many(5, "k"), CONCURRENCY, []],
    ["an idle lane gets one worker even when every slot is busy", given(), many(5, "k"), CONCURRENCY, ["StartWorkers k 1"]],
    ["each key its own workers", given(), [...many(2, "a"), ...many(1, "b")], 0, ["StartWorkers a 2", "StartWorkers b 1"]]
  ])("%s", (_name, s, leased, busy, actions) => {
    const t = fannedOut(s, { leased, deliveries: leased.length, events: 1 }, NOW, busy)
    expect(tags(t.actions)).toEqual(actions)
    expect(t.state.queued).toBe(s.queued + leased.length)
    const started = t.actions.reduce((n, a) => n + (a._tag === "StartWorkers" ? a.n : 0), 0)
    expect(t.state.reserved).toBe(s.reserved + started)
  })

  it.each<[string, number, number, boolean, ReadonlyArray<string>]>([
    ["deliveries it could not lease make the next step claim", 3, 1, true, []],
    ["everything leased: no claim wanted", 0, 1, false, []],
    ["a full batch of events wakes the loop for the rest", 0, FAN_OUT_BATCH, false, ["Wake"]]
  ])("%s", (_name, extra, events, claimWanted, actions) => {
    const t = fannedOut(given({}, { claimWanted: false }), { leased: [], deliveries: extra, events }, NOW, 0)
    expect(t.state.claimWanted).toBe(claimWanted)
    expect(tags(t.actions)).toEqual(actions)
  })

  it.each<[string, DispatchState, Record<string, number>]>([
    ["an unhealthy lane gets nothing ahead", given({ k: { healthy: false } }), {}],
    ["a healthy lane gets room up to its cap", given({ k: { healthy: true, queued: 10 } }), { k: LANE_CAP - 10 }],
    ["lanes share what is left of the overall cap, in order", given({ a: { healthy: true, queued: 0 }, b: { healthy: true, queued: 0 } }, { queued: QUEUED_CAP - 100 }), { a: LANE_CAP, b: 100 - LANE_CAP }],
    ["nothing ahead when the overall cap is reached", given({ k: { healthy: true } }, { queued: QUEUED_CAP }), {}]
  ])("room ahead: %s", (_name, s, room) => {
    expect(Object.fromEntries(roomAhead(s))).toEqual(room)
  })
})

describe("the claim across keys", () => {
  it.each<[string, DispatchState, number, number, number | undefined, boolean]>([
    ["a wanted claim takes every free slot", given(), 0, NOW, CONCURRENCY, false],
    ["reserved workers and busy slots are left out", given({}, { reserved: 2 }), 10, NOW, CONCURRENCY - 12, false],
    ["not wanted and under a poll since the last: none", given({}, { claimWanted: false, lastClaim: NOW - POLL_MS + 1 }), 0, NOW, undefined, false],
    ["not wanted but the poll's time has come", given({}, { claimWanted: false, lastClaim: NOW - POLL_MS }), 0, NOW, CONCURRENCY, false],
    ["no slot free: none, and starved so a freed slot wakes a claim", given(), CONCURRENCY, NOW, undefined, true]
  ])("%s", (_name, s, busy, now, limit, starved) => {
    const plan = planClaim(s, now, busy)
    expect(plan.claim?.limit).toBe(limit)
    expect(plan.state.starved).toBe(starved)
    if (limit !== undefined) expect(plan.state).toMatchObject({ claimWanted: false, lastClaim: now })
  })

  it("tells the claim how many workers each key has here", () => {
    expect(Object.fromEntries(planClaim(given({ a: { workers: 3 }, b: { workers: 0 } }), NOW, 0).claim!.held)).toEqual({ a: 3, b: 0 })
  })

  it.each<[string, number, number, boolean]>([
    ["a claim that fills every free slot leaves the dispatcher starved", 5, 5, true],
    ["a short claim does not", 5, 2, false]
  ])("%s", (_name, limit, got, starved) => {
    const t = claimed(given({ k: { backlog: false } }), many(got, "k"), limit, NOW)
    expect(t.state.starved).toBe(starved)
    expect(laneOf(t.state, "k")).toMatchObject({ backlog: true, workers: got })
    expect(tags(t.actions)).toEqual([`StartWorkers k ${got}`])
  })

  it.each<[string, DispatchState, boolean]>([
    ["a freed slot after a starved claim makes the next step claim", given({}, { starved: true, claimWanted: false }), true],
    ["a freed slot otherwise only wakes the loop", given({}, { starved: false, claimWanted: false }), false]
  ])("%s", (_name, s, claimWanted) => {
    const t = slotFreed(s)
    expect(t.state.claimWanted).toBe(claimWanted)
    expect(tags(t.actions)).toEqual(["Wake"])
  })

  it("a wake-up from elsewhere makes the next step claim", () => {
    expect(signalled(given({}, { claimWanted: false })).state.claimWanted).toBe(true)
  })

  it.each<[string, Partial<LaneState<Held>>, boolean]>([
    ["an idle lane is forgotten after LANE_IDLE_MS", { idleSince: NOW - LANE_IDLE_MS - 1 }, false],
    ["an idle lane is kept for the fan-out to lease ahead", { idleSince: NOW - LANE_IDLE_MS }, true],
    ["a lane with a worker is kept", { workers: 1, idleSince: 0 }, true],
    ["a lane with a claim under way is kept", { refilling: true, idleSince: 0 }, true]
  ])("%s", (_name, lane, kept) => {
    expect(pruneIdle(given({ k: lane }), NOW).lanes.has("k")).toBe(kept)
  })
})

describe("a worker's next step", () => {
  it.each<[string, DispatchState, number, string, boolean]>([
    ["takes the oldest leased delivery", given({ k: { workers: 1, queued: 20 } }), 0, "Attempt", false],
    ["a healthy lane with a backlog running low is refilled beside its workers", given({ k: { workers: 1, queued: LOW_WATER, healthy: true } }), 0, "Attempt", true],
    ["a healthy lane above the low water is not", given({ k: { workers: 1, queued: LOW_WATER + 1, healthy: true } }), 0, "Attempt", false],
    ["an unhealthy lane is not refilled ahead", given({ k: { workers: 1, queued: 1, healthy: false } }), 0, "Attempt", false],
    ["a lane without backlog is not refilled ahead", given({ k: { workers: 1, queued: 1, healthy: true, backlog: false } }), 0, "Attempt", false],
    ["an empty lane without backlog: the worker leaves", given({ k: { workers: 1, backlog: false } }), 0, "Leave", false],
    ["an empty lane with a backlog: a probe is claimed and awaited", given({ k: { workers: 1 } }), 0, "AwaitRefill", true],
    ["an empty lane with a backlog but every slot busy: the worker leaves", given({ k: { workers: 1 } }), CONCURRENCY, "Leave", false],
    ["an empty lane with a claim under way: the worker waits for it", given({ k: { workers: 1, refilling: true } }), CONCURRENCY, "AwaitRefill", false],
    ["a lease this close to its end is given back, not attempted", given({ k: { workers: 1, queued: 20, leasedAt: NOW - (LEASE_MS - LEASE_MARGIN_MS) - 1 } }), 0, "Expired", false]
  ])("%s", (_name, s, busy, step, refill) => {
    const next = workerNext(s, "k", NOW, busy)
    expect(next.step._tag).toBe(step)
    expect(next.refill).toBe(refill)
    if (refill) expect(laneOf(next.state, "k").refilling).toBe(true)
    const took = step === "Attempt" || step === "Expired" ? 1 : 0
    expect(next.state.queued).toBe(s.queued - took)
  })

  it.each<[string, number, number, "Leave" | "Continue"]>([
    ["a claim that leased nothing, with nothing waiting: the worker leaves", 0, 0, "Leave"],
    ["a claim that leased some: go on", 3, 3, "Continue"],
    ["nothing leased but the fan-out brought some meanwhile: go on", 0, 2, "Continue"]
  ])("%s", (_name, leased, waiting, after) => {
    expect(afterRefill(given({ k: { workers: 1, queued: waiting } }), "k", leased)).toBe(after)
  })

  it.each<[string, DispatchState, number]>([
    ["a healthy lane claims a batch", given({ k: { healthy: true } }), BATCH],
    ["a healthy lane near its cap claims what fits", given({ k: { healthy: true, queued: LANE_CAP - 5 } }), 5],
    ["a healthy lane with the overall cap reached still claims one", given({ k: { healthy: true } }, { queued: QUEUED_CAP }), 1],
    ["an unhealthy lane claims one (a probe)", given({ k: { healthy: false } }), 1]
  ])("refill size: %s", (_name, s, size) => {
    expect(refillSize(s, "k")).toBe(size)
  })

  it.each<[string, number, number, number, boolean, ReadonlyArray<string>]>([
    ["a full refill means a backlog", 1, 4, 4, true, []],
    ["a short refill means none", 1, 4, 2, false, []],
    ["a refill for a lane whose workers all left goes back to the database", 0, 4, 4, true, ["GiveBack 4"]]
  ])("%s", (_name, workers, size, got, backlog, actions) => {
    const t = refilled(given({ k: { workers, backlog: !backlog } }), "k", size, many(got, "k"), NOW)
    expect(laneOf(t.state, "k").backlog).toBe(backlog)
    expect(tags(t.actions)).toEqual(actions)
    expect(laneOf(t.state, "k").queue).toHaveLength(workers === 0 ? 0 : got)
  })
})

describe("when attempts fail and workers leave", () => {
  it.each<[string, boolean, boolean, ReadonlyArray<string>]>([
    ["a success marks the lane healthy and keeps its work", true, true, []],
    ["a failure marks it unhealthy and gives its waiting work back", false, false, ["GiveBack 5"]]
  ])("%s", (_name, ok, healthy, actions) => {
    const t = attempted(given({ k: { workers: 1, queued: 5, healthy: !healthy } }), "k", ok)
    expect(laneOf(t.state, "k").healthy).toBe(healthy)
    expect(tags(t.actions)).toEqual(actions)
    expect(t.state.queued).toBe(ok ? 5 : 0)
  })

  it("a failed attempt starting its burst is trouble at once: work given back, its slot freed", () => {
    const t = failing(given({ k: { workers: 1, queued: 3, healthy: true } }), "k")
    expect(laneOf(t.state, "k").healthy).toBe(false)
    expect(tags(t.actions)).toEqual(["GiveBack 3", "SlotFreed"])
  })

  it.each<[string, number, boolean, number, ReadonlyArray<string>]>([
    ["a worker that leaves others behind frees its slot", 2, false, 0, ["SlotFreed"]],
    ["the last worker gives back what was leased meanwhile", 1, false, 0, ["GiveBack 2", "SlotFreed"]],
    ["a worker that never attempted is no longer reserved", 2, true, 0, ["SlotFreed"]]
  ])("%s", (_name, workers, unstarted, reserved, actions) => {
    const s = given({ k: { workers, queued: 2 } }, { reserved: unstarted ? 1 : 0 })
    const t = workerLeft(s, "k", unstarted, NOW)
    expect(laneOf(t.state, "k").workers).toBe(workers - 1)
    expect(t.state.reserved).toBe(reserved)
    expect(tags(t.actions)).toEqual(actions)
    if (workers === 1) expect(laneOf(t.state, "k").idleSince).toBe(NOW)
  })

  it("at shutdown a worker gives back its current delivery with the lane's", () => {
    expect(tags(workerInterrupted(given({ k: { workers: 1, queued: 2 } }), "k", held("k")).actions)).toEqual(["GiveBack 3"])
    expect(tags(workerInterrupted(given({ k: { workers: 1 } }), "k", undefined).actions)).toEqual([])
  })
})
