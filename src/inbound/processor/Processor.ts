/**
 * The inbound actor: a short story of named steps for the messages the MX listener committed.
 * claim a batch (leased) → understand each (the pure parsers) → complete the batch: judge the
 * reports that name deliveries only by Message-ID (trust.ts), mark its messages processed and
 * apply what they mean (bounce, complaint or DMARC effects, in the same transaction) → let
 * reputation look at the accounts touched. A mail to the unsubscribe address is no report: its
 * header alone is read here (parse/unsubscribe-request.ts) and it is applied as an unsubscribe
 * (bulk's, through the ReportHooks port: ports.ts) or recorded and ignored. A message whose parse
 * or effects fail is retried with growing pauses and finally parked as `failed` with its error;
 * one the parsers refuse (malformed, over a limit, out of memory on it) is parked at once, since
 * every attempt would end the same way. Its raw bytes stay until the retention prune. Wakes on the
 * listener's signal (herald_inbound) and polls every 2 s for retries.
 * Understanding is CPU work (a fraction of a millisecond for a bounce, up to seconds for a large
 * DMARC report): it runs in a pool of worker threads (HERALD_PARSE_WORKERS, src/lib/worker-pool.ts)
 * so that the MX listener's thread stays free; claims, retries and every database effect stay
 * here. A parse handed to a worker behind one that crashed it, or that outlasts PARSE_TIMEOUT,
 * fails like any other attempt and is retried.
 * Statements are what a message costs here, so they are per batch, not per message: one claim,
 * one read of the deliveries the batch names, one UPDATE (effects only for the messages that name
 * a delivery — most reports do not).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { type InboundKind, INBOUND_KINDS, recordInbound, recordInboundParseFailure } from "../../lib/metrics.ts"
import { Cause, Clock, Duration, Effect, Exit, Option, Queue, Schedule } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { actorLayer } from "../../lib/actor.ts"
import { randomBase62 } from "../../lib/ids.ts"
import { makeWorkerPool, WorkerTaskError } from "../../lib/worker-pool.ts"
import { type Channel, QueueSignal } from "../../db/QueueSignal.ts"
import { Reputation } from "../../platform/reputation/Reputation.ts"
import { InboundConfig } from "../InboundConfig.ts"
import { errorOf, toParseOutput } from "../parse-output.ts"
import { configureDmarcLimits, defaultDmarcLimits } from "../parse/dmarc/index.ts"
import type { ParseWorkerData } from "../parse-worker.ts"
import type { Understood } from "../parse/types.ts"
import { understandMessage } from "../understand.ts"
import { INBOUND_LEASE_MS, InboundHandoff } from "./handoff.ts"
import { isUnsubscribeRequest, understandUnsubscribeRequest } from "../parse/unsubscribe-request.ts"
import { effectsOf, type EffectsContext, keysOf } from "./effects.ts"
import { type ClaimedInbound, InboundQueue, type Parsed } from "./InboundQueue.ts"
import { lookupDeliveries } from "./mapping.ts"
import { ReportedDeliveries, ReportHooks } from "./ports.ts"
import { makeReportTrust } from "./trust.ts"

/** A parsed message's kind as a metrics label (an unsubscribe request by mail is `other`). */
const inboundKindOf = (kind: string): InboundKind => (INBOUND_KINDS as ReadonlyArray<string>).includes(kind) ? kind as InboundKind : "other"

export const INBOUND_CHANNEL: Channel = "herald_inbound"
const LEASE_MS = INBOUND_LEASE_MS
const POLL = Duration.seconds(2)
/** A parse that takes longer is abandoned (its worker replaced) and retried later. */
const PARSE_TIMEOUT = Duration.minutes(1)
/** Heap limit of one parse worker: a hostile message crashes its worker, not the appliance. */
const PARSE_WORKER_MEMORY_MB = 512
const PARSE_WORKER = new URL("../parse-worker.ts", import.meta.url)
/**
 * Raw bytes the claimed batches may hold in all (each claim CLAIM_BYTES / lanes, and always at
 * least one message): a batch is held in memory until parsed, and a count alone would let 32
 * messages of 25 MB through at once.
 */
const CLAIM_BYTES = 32 * 1024 * 1024
/**
 * How long a wake-up waits before it claims: the listener commits every few milliseconds under
 * load, and a claim (with the group completion that follows) per commit cost more statements than
 * the messages themselves. Parsing is not on the sender's path, so 50 ms more before it is free.
 */
const CLAIM_DELAY = Duration.millis(50)
/** Chunks of a transfer the listener never finished (it died mid-DATA) are dropped after a day. */
const STAGED_CHUNKS_KEPT_MS = 86_400_000

/**
 * How the processor claims and handles messages: a claim takes up to `batch` messages (and
 * CLAIM_BYTES / lanes bytes), and `lanes` claimed batches are handled at once. A batch is handed
 * to the workers whole, each worker holding `pipeline` messages ahead: the main thread's event
 * loop is busy with the listener, so a worker waits for its next message unless it already holds
 * several. A second batch keeps the parser busy while the first completes and the next claim is
 * made (measured on 2 cores under load: one batch at a time left the worker idle between batches,
 * and processing fell behind the listener). The raw bytes of two batches are in memory at once.
 * Without workers (0): one batch of 8, parsed in this thread `concurrency` at a time.
 */
export const inboundShape = (workers: number) => {
  if (workers === 0) return { lanes: 1, batch: 8, concurrency: 2, pipeline: 0 }
  const batch = Math.min(32, Math.max(16, 4 * workers))
  return { lanes: 2, batch, concurrency: batch, pipeline: Math.min(8, Math.ceil(batch / workers)) }
}

/**
 * Whether a failed parse will fail the same way every time: the parsers threw on these bytes, or
 * ran their worker out of memory. A crash of a task's worker caused by another task, a timeout
 * (the cores may just have been busy) or a full pool are worth another attempt.
 */
const isPermanent = (cause: Cause.Cause<unknown>): boolean =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => false,
    onSome: (error) => error instanceof WorkerTaskError ? error.reason === "failed" || error.reason === "memory" : true
  })

/** The parsers' own words for a failure (no stack: the row's `error` is read by operators). */
const failureText = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => Cause.pretty(cause),
    onSome: (error) => {
      // Parsed in this thread (no workers), a throw arrives wrapped by Effect.tryPromise.
      const thrown = error instanceof Cause.UnknownException ? error.error : error
      return thrown instanceof Error ? thrown.message : String(thrown)
    }
  })

/** A message whose every report the parsers refused (malformed, over a limit): nothing in it can be applied, now or later. */
const unreadable = (understood: Understood): string | null =>
  understood.kind === "dmarc" && understood.dmarc.length === 0 ? errorOf(understood) : null

const asBuffer = (bytes: Uint8Array) => Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/**
 * The next batch: what the listener handed over (handoff.ts), else a claim — and a claim at least
 * every POLL while messages keep being handed over, so that retries and what found no room in the
 * handoff are not left behind.
 */
const batchSource = (handoff: InboundHandoff, queue: InboundQueue, owner: string, batch: number, claimBytes: number) => {
  let lastClaim = 0
  return (now: Date): Effect.Effect<ReadonlyArray<ClaimedInbound>, SqlError> => {
    const handed = now.getTime() - lastClaim < Duration.toMillis(POLL) ? handoff.take(batch, claimBytes) : []
    if (handed.length > 0) return Effect.succeed(handed)
    lastClaim = now.getTime()
    // A claim that finds nothing leaves the turn to the handoff (a quiet spell made the claim due).
    return Effect.map(queue.claim(owner, now, new Date(now.getTime() + LEASE_MS), batch, claimBytes), (claimed) =>
      claimed.length > 0 ? claimed : handoff.take(batch, claimBytes))
  }
}

/**
 * The listener hands this processor its messages from now on; when it stops, what was handed over
 * and not started goes back to the database, due at once, rather than waiting for its lease to end.
 */
const openHandoff = (handoff: InboundHandoff, queue: InboundQueue, owner: string) =>
  Effect.acquireRelease(Effect.sync(() => handoff.open(owner)), () =>
    Effect.clockWith((clock) => queue.release(owner, handoff.close(), new Date(clock.unsafeCurrentTimeMillis()))).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("inbound messages handed over not given back; their leases end on their own", cause))
    ))

// Scoped to the actor's own fiber: at shutdown the loop stops first, then the workers are terminated.
export const InboundProcessorLive = actorLayer("inbound", Effect.scoped(Effect.gen(function*() {
  const settings = yield* InboundConfig
  if (!settings.enabled) return yield* Effect.logInfo("inbound processing is disabled (HERALD_INBOUND_ENABLED=false)")
  const config = yield* AppConfig
  const queue = yield* InboundQueue
  const reputation = yield* Reputation
  const { deliveryOfReturnPath } = yield* ReportedDeliveries
  const { unsubscribeLocalPart } = yield* ReportHooks
  const trust = yield* makeReportTrust
  const signal = yield* QueueSignal
  const handoff = yield* InboundHandoff
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
  const workers = settings.parseWorkers
  const { lanes, batch, concurrency, pipeline } = inboundShape(workers)
  const claimBytes = CLAIM_BYTES / lanes
  const dmarcLimits = { ...defaultDmarcLimits, maxRecords: settings.dmarcMaxRecords }
  configureDmarcLimits(dmarcLimits)
  const pool = workers === 0 ? undefined : yield* makeWorkerPool<Understood>({
    name: "inbound parser",
    file: PARSE_WORKER,
    size: workers,
    pipeline,
    queue: lanes * batch,
    timeout: PARSE_TIMEOUT,
    maxMemoryMb: PARSE_WORKER_MEMORY_MB,
    workerData: { dmarcLimits } satisfies ParseWorkerData,
    inProcess: (bytes) => understandMessage(asBuffer(bytes))
  })
  /**
   * What the parsers make of each message, in order, as outcomes: one effect for the batch. The
   * raw bytes are handed over to the workers: `raw` is not to be read again.
   */
  const understandAll = (raws: ReadonlyArray<Buffer>): Effect.Effect<ReadonlyArray<Exit.Exit<Understood, unknown>>> =>
    pool === undefined
      ? Effect.forEach(raws, (raw) => Effect.exit(Effect.tryPromise(() => understandMessage(raw))), { concurrency })
      : pool.runAll(raws)

  /** A failed attempt: due again later, or parked with its error; the lease hands it out again if even that fails. */
  const recordFailure = (message: ClaimedInbound, cause: Cause.Cause<unknown>, now: Date) =>
    Effect.logWarning("inbound message could not be processed; will retry", cause).pipe(
      Effect.zipRight(queue.fail(owner, message.id, message.attempts, String(cause), now)),
      Effect.catchAllCause((again) => Effect.logError("could not record the failure; the lease hands it out again", again)),
      Effect.annotateLogs({ inbound_message_id: message.id })
    )

  /** A parse failure that will always fail: parked at once, not retried (and counted for the metrics). */
  const park = (message: ClaimedInbound, kind: string | null, error: string, now: Date) =>
    Effect.logWarning("inbound message refused by the parsers; parked as failed").pipe(
      Effect.tap(() => recordInboundParseFailure()),
      Effect.annotateLogs({ error }),
      Effect.zipRight(queue.park(owner, message.id, kind, error)),
      Effect.catchAllCause((cause) => recordFailure(message, cause, now)),
      Effect.annotateLogs({ inbound_message_id: message.id })
    )

  /**
   * A batch's messages as parsed. Those that could not be are parked at once when the failure is
   * the message's own (isPermanent, unreadable), and otherwise recorded as failed attempts.
   */
  const parseAll = (claimed: ReadonlyArray<ClaimedInbound>, now: Date) =>
    Effect.gen(function*() {
      const parsed: Array<Parsed> = []
      // A mail to the unsubscribe address is read here, its header only: it needs no report parser.
      const isRequest = (message: ClaimedInbound) => isUnsubscribeRequest(message.rcpt_to, unsubscribeLocalPart, config.bounceDomain)
      for (const message of claimed) {
        if (message.raw !== null && isRequest(message)) parsed.push({ message, understood: understandUnsubscribeRequest(message.raw), now })
      }
      const present = claimed.filter((message) => message.raw !== null && !isRequest(message))
      for (const message of claimed) {
        if (message.raw !== null) continue
        yield* queue.fail(owner, message.id, message.attempts, "raw message missing", now).pipe(
          Effect.catchAllCause((cause) => recordFailure(message, cause, now))
        )
      }
      const exits = yield* understandAll(present.map((message) => message.raw!))
      for (let i = 0; i < present.length; i++) {
        const exit = exits[i]!
        const message = present[i]!
        if (Exit.isFailure(exit)) {
          if (isPermanent(exit.cause)) yield* park(message, null, failureText(exit.cause), now)
          else yield* recordFailure(message, exit.cause, now)
          continue
        }
        const refused = unreadable(exit.value)
        if (refused !== null) yield* park(message, exit.value.kind, refused, now)
        else parsed.push({ message, understood: exit.value, now })
      }
      return parsed
    })

  /**
   * Marks parsed messages processed together: the deliveries they name read with one statement,
   * then one UPDATE for all of them — in one transaction with the effects of those that change
   * something — then reputation looks at the accounts touched.
   */
  const complete = (group: ReadonlyArray<Parsed>) =>
    Effect.gen(function*() {
      const keys = group.map((parsed) => keysOf(parsed, deliveryOfReturnPath))
      const index = yield* lookupDeliveries(keys)
      const trusted = yield* trust.judge(group, keys, index, settings)
      const outcomes = yield* queue.completeGroup(owner, group.map((parsed, i) => ({
        id: parsed.message.id,
        kind: parsed.understood.kind,
        result: toParseOutput(parsed.understood),
        error: errorOf(parsed.understood),
        processedAt: parsed.now,
        effects: effectsOf(parsed, keys[i]!, index, settings, trusted[i]!)
      })))
      for (const parsed of group) recordInbound(inboundKindOf(parsed.understood.kind))
      yield* Effect.logDebug("inbound messages processed").pipe(Effect.annotateLogs({ messages: group.length }))
      return new Set(outcomes.flatMap((outcome) => outcome?.accounts ?? []))
    })

  /** A group whose completion failed is completed message by message, so that one bad message fails alone. */
  const completeOrSplit = (group: ReadonlyArray<Parsed>): Effect.Effect<ReadonlySet<string>, never, EffectsContext> =>
    complete(group).pipe(Effect.catchAllCause((cause) =>
      group.length === 1
        ? recordFailure(group[0]!.message, cause, group[0]!.now).pipe(Effect.as(new Set<string>()))
        : Effect.forEach(group, (parsed) => completeOrSplit([parsed])).pipe(Effect.map((sets) => new Set(sets.flatMap((s) => [...s]))))
    ))

  const evaluateReputation = (accounts: ReadonlySet<string>, now: Date) =>
    Effect.forEach(accounts, (accountId) =>
      reputation.evaluate(accountId, now).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("reputation check after inbound reports failed", cause))
      ), { discard: true })

  /** One claimed batch: parsed (in the workers, as they come), then completed as one group. */
  const handleBatch = (claimed: ReadonlyArray<ClaimedInbound>, now: Date) =>
    Effect.gen(function*() {
      const parsed = yield* parseAll(claimed, now)
      if (parsed.length === 0) return
      yield* evaluateReputation(yield* completeOrSplit(parsed), now)
    })

  /**
   * Claims due messages and starts handling them; returns whether more are due right away (the
   * claim was cut short by its count, or by its bytes — a cut leaves it at or past the budget).
   */
  const nextBatch = batchSource(handoff, queue, owner, batch, claimBytes)

  const step = (slots: Effect.Semaphore) =>
    Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const claimed = yield* nextBatch(now).pipe(
        Effect.onExit((exit) => (Exit.isSuccess(exit) && exit.value.length > 0 ? Effect.void : slots.release(1)))
      )
      if (claimed.length === 0) return false
      // Measured before the batch is handed over: the workers take the raw bytes away.
      const more = claimed.length === batch || claimed.reduce((bytes, m) => bytes + (m.raw?.length ?? 0), 0) >= claimBytes ||
        handoff.waitingCount() > 0
      yield* Effect.fork(handleBatch(claimed, now).pipe(Effect.ensuring(slots.release(1))))
      return more
    }).pipe(Effect.catchAllCause((cause) => Effect.logError("inbound claim failed; retrying", cause).pipe(Effect.as(false))))

  const prune = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const pruned = yield* queue.prune(new Date(now - settings.retentionDays * 86_400_000), new Date(now - STAGED_CHUNKS_KEPT_MS))
    if (pruned > 0) yield* Effect.logInfo("raw inbound messages pruned").pipe(Effect.annotateLogs({ pruned }))
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("inbound prune failed", cause)))
  yield* Effect.forkScoped(Effect.repeat(prune, Schedule.spaced(Duration.hours(1))))

  yield* openHandoff(handoff, queue, owner)
  yield* Effect.logInfo("inbound processor started").pipe(Effect.annotateLogs({ owner, parse_workers: workers }))
  // Up to `lanes` claimed batches are handled at once; the next claim waits for a free slot.
  const slots = yield* Effect.makeSemaphore(lanes)
  const wakeups = yield* signal.subscribe(INBOUND_CHANNEL)
  /**
   * Nothing more is due: wait for a wake-up (or the poll, for retries), then a moment longer, so
   * that messages the listener commits one after another are claimed and completed together.
   */
  const idle = Queue.take(wakeups).pipe(
    Effect.timeout(POLL),
    Effect.ignore,
    Effect.zipRight(Effect.sleep(CLAIM_DELAY)),
    Effect.zipRight(Queue.takeAll(wakeups))
  )
  yield* Effect.forever(Effect.gen(function*() {
    yield* slots.take(1)
    if (!(yield* step(slots))) yield* idle
  }))
})))
