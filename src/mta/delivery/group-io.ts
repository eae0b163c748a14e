/**
 * The database work of the attempts running at the same time, a group per statement (group
 * commit, src/lib/group-commit.ts): one reads their messages with their sending domain's row, one
 * writes their outcomes with their events, one gives back the deliveries an account's or a
 * campaign's pause holds. Measured on bench/outbound.ts, one attempt used to cost six round trips
 * (the message, the domain row, then BEGIN, UPDATE, INSERT event, COMMIT), and the round trips
 * were most of the MTA's main-thread time.
 */
import { Effect } from "effect"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { recordDelivery } from "../../lib/metrics.ts"
import { HOLD_RECHECK_MS } from "../queue/delivery-checks.ts"
import type { ClaimedDelivery, Completion, DeliveryQueue, LoadedMessage, MessageForDelivery, Outcome } from "../queue/DeliveryQueue.ts"
import type { Held } from "./held-messages.ts"

/** Lookups of one delivery group's messages share a statement up to this many (bounded by the claim anyway). */
const LOAD_GROUP = 200
/** Outcomes written in one statement, at most (a parameter list and a JSON document per group). */
const WRITE_GROUP = 500
/**
 * Outcome groups committing at once. With one, outcomes that arrived during a commit waited for
 * it to end before theirs began — and each attempt's connection waits for its outcome
 * (Delivery.ts, withOutcomeGate) — so an outcome is written as soon as it arrives, in a group of
 * whatever arrived with it. Four of the pool's connections (HERALD_DB_POOL_MAX, 10 by default) at
 * most: claims, reads and the API keep the others.
 */
const OUTCOME_WRITERS = 4

/**
 * The attempts' reads and writes, each shared with the attempts running at the same time; `now` is
 * the attempts' clock; `siteOf` names a recipient domain's destination site for the metrics.
 */
export const makeGroupIo = (queue: DeliveryQueue, now: Effect.Effect<Date>, siteOf: (domain: string) => string) =>
  Effect.gen(function*() {
    // Each message with its sending domain's row as it is now (every attempt), its stored parts when asked.
    const loads = yield* makeGroupCommit({
      write: (items: ReadonlyArray<{ readonly id: string; readonly content: boolean }>) =>
        Effect.map(queue.load([...new Set(items.map((i) => i.id))], items.filter((i) => i.content).map((i) => i.id)), (rows) => {
          const byId = new Map(rows.map((r) => [r.id, r]))
          return items.map((i): LoadedMessage | undefined => byId.get(i.id))
        }),
      maxItems: LOAD_GROUP
    })
    const outcomes = yield* makeGroupCommit({
      write: (items: ReadonlyArray<Completion>) => queue.completeMany(items),
      maxItems: WRITE_GROUP,
      writers: OUTCOME_WRITERS
    })
    // A paused account's whole backlog falls due again at once at each recheck.
    const holds = yield* makeGroupCommit({
      write: (items: ReadonlyArray<{ readonly owner: string; readonly id: string; readonly at: Date }>) => {
        const at = new Date(Math.max(...items.map((i) => i.at.getTime())))
        return queue.hold([...new Set(items.map((i) => i.owner))], items.map((i) => i.id), at, new Date(at.getTime() + HOLD_RECHECK_MS))
      },
      maxItems: WRITE_GROUP
    })

    /** The message with its domain's row as it is now; its stored parts (unless `withContent` is false) kept from the first attempt that read them. */
    const messageOf = (id: string, h: Held, withContent = true) =>
      Effect.suspend(() => {
        const reading = withContent && h.parts === undefined
        return Effect.flatMap(loads.submit({ id, content: reading }), (row): Effect.Effect<LoadedMessage> => {
          if (row === undefined) return Effect.die(new Error(`delivery without message ${id}`))
          if (reading && h.parts === undefined) h.parts = { content: row.content, shared: row.shared }
          return Effect.succeed(row)
        })
      })

    /**
     * Hands an outcome to the group writer and waits until it is on record. Uninterruptible: at
     * shutdown an attempt whose SMTP transaction is over still records it (before the actor gives
     * back its leases), rather than leaving a sent message to be sent again.
     */
    const complete = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, outcome: Outcome, now: Date, renderedSubject?: string) =>
      Effect.uninterruptible(outcomes.submit({ owner, d, m, outcome, now, renderedSubject })).pipe(
        // Counted once on record: an outcome another replica's lease overtook was not this one's.
        Effect.tap((written) => (written ? recordDelivery(outcome._tag, siteOf(d.recipient_domain)) : undefined))
      )

    /** Fails the delivery for good with `status` and `reply` (no SMTP session decided it). */
    const fail = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, status: string, reply: string) =>
      Effect.flatMap(now, (at) => complete(owner, d, m, { _tag: "failed", code: null, status, reply }, at))

    /** Fails the delivery before its stored parts are read: the message's row alone. */
    const failUnread = (owner: string, d: ClaimedDelivery, h: Held, status: string, reply: string) =>
      Effect.flatMap(messageOf(d.message_id, h, false), (m) => fail(owner, d, m, status, reply))

    /** The delivery goes back with its hold (an account's or a campaign's pause), until the pause is looked at again. */
    const hold = (owner: string, d: ClaimedDelivery, at: Date) => Effect.uninterruptible(holds.submit({ owner, id: d.id, at }))

    return { messageOf, complete, fail, failUnread, hold } as const
  })
