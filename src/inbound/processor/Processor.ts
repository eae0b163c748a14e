/**
 * The inbound actor: a short story of named steps for each message the MX listener committed.
 * claim (leased) → understand (the pure parsers) → apply what it means (bounce, complaint or
 * DMARC effects, in the same transaction that marks the message processed) → let reputation look
 * at the accounts touched. A message whose parse or effects fail is retried with growing pauses
 * and finally parked as `failed` with its error; its raw bytes stay until the retention prune.
 * Wakes on the listener's signal (herald_inbound) and polls every 2 s for retries.
 * Understanding is CPU work (mailparser and the report parsers: milliseconds a message, up to
 * seconds for a large DMARC report): it runs in a pool of worker threads (HERALD_PARSE_WORKERS,
 * src/lib/worker-pool.ts) so that the MX listener's thread stays free; claims, retries and every
 * database effect stay here. A parse that crashes its worker (or is handed to it behind one that
 * does) or outlasts PARSE_TIMEOUT fails like any other attempt and is retried.
 */
import { Clock, Duration, Effect, Queue, Schedule } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { actorLayer } from "../../lib/actor.ts"
import { randomBase62 } from "../../lib/ids.ts"
import { makeWorkerPool } from "../../lib/worker-pool.ts"
import { type Channel, QueueSignal } from "../../mta/queue/QueueSignal.ts"
import { VerpSecret } from "../../mta/VerpSecret.ts"
import { Reputation } from "../../platform/reputation/Reputation.ts"
import { InboundConfig } from "../InboundConfig.ts"
import { errorOf, toParseOutput } from "../parse-output.ts"
import type { Understood } from "../parse/types.ts"
import { understandMessage } from "../understand.ts"
import { applyBounce } from "./bounces.ts"
import { applyComplaint } from "./complaints.ts"
import { storeDmarcReports } from "./dmarc.ts"
import { type ClaimedInbound, InboundQueue } from "./InboundQueue.ts"

export const INBOUND_CHANNEL: Channel = "herald_inbound"
const LEASE_MS = 5 * 60_000
const POLL = Duration.seconds(2)
/** A parse that takes longer is abandoned (its worker replaced) and retried later. */
const PARSE_TIMEOUT = Duration.minutes(1)
/** Heap limit of one parse worker: a hostile message crashes its worker, not the appliance. */
const PARSE_WORKER_MEMORY_MB = 512
const PARSE_WORKER = new URL("../parse-worker.ts", import.meta.url)

/**
 * How many messages one claim takes, how many are handled at once, and how many each worker is
 * handed ahead. The main thread's event loop is busy with the listener, so a worker waits for its
 * next message unless it already holds several (pipeline), and enough must be in flight that some
 * are being parsed while others are in their database step; a batch twice the concurrency keeps
 * them in flight between claims. (Measured on 2 cores under load: 16 in flight kept up with the
 * listener where 8 fell behind.) The raw bytes of a whole batch are in memory at once.
 * Without workers (0): two at a time in this thread, as before.
 */
export const inboundShape = (workers: number) => {
  if (workers === 0) return { batch: 8, concurrency: 2, pipeline: 0 }
  const concurrency = Math.min(32, Math.max(16, 4 * workers))
  return { batch: 2 * concurrency, concurrency, pipeline: Math.min(8, Math.ceil(concurrency / workers)) }
}

const asBuffer = (bytes: Uint8Array) => Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

// Scoped to the actor's own fiber: at shutdown the loop stops first, then the workers are terminated.
export const InboundProcessorLive = actorLayer("inbound", Effect.scoped(Effect.gen(function*() {
  const settings = yield* InboundConfig
  if (!settings.enabled) return yield* Effect.logInfo("inbound processing is disabled (HERALD_INBOUND_ENABLED=false)")
  const config = yield* AppConfig
  const queue = yield* InboundQueue
  const reputation = yield* Reputation
  const verpSecret = (yield* VerpSecret).value
  const wakeups = yield* (yield* QueueSignal).subscribe(INBOUND_CHANNEL)
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
  const workers = settings.parseWorkers
  const { batch, concurrency, pipeline } = inboundShape(workers)
  const pool = workers === 0 ? undefined : yield* makeWorkerPool<Understood>({
    name: "inbound parser",
    file: PARSE_WORKER,
    size: workers,
    pipeline,
    queue: concurrency,
    timeout: PARSE_TIMEOUT,
    maxMemoryMb: PARSE_WORKER_MEMORY_MB,
    inProcess: (bytes) => understandMessage(asBuffer(bytes))
  })
  /** The raw bytes are handed over to the worker: `raw` is not to be read again. */
  const understand = (raw: Buffer) => pool === undefined ? Effect.tryPromise(() => understandMessage(raw)) : pool.run(raw)

  const effectsOf = (understood: Understood, message: ClaimedInbound, now: Date) => {
    const ctx = { inboundId: message.id, rcptTo: message.rcpt_to, verpSecret, settings, now }
    switch (understood.kind) {
      case "bounce":
        return applyBounce(understood.bounce, ctx)
      case "complaint":
        return applyComplaint(understood.complaint, ctx)
      case "dmarc":
        return storeDmarcReports(understood.dmarc, ctx).pipe(Effect.as({ matched: 0, accounts: [] as Array<string> }))
      case "other":
        return Effect.succeed({ matched: 0, accounts: [] as Array<string> })
    }
  }

  const handle = (message: ClaimedInbound, now: Date) =>
    Effect.gen(function*() {
      if (message.raw === null) return yield* queue.fail(owner, message.id, message.attempts, "raw message missing", now)
      const understood = yield* understand(message.raw)
      const outcome = yield* queue.complete(
        owner,
        message.id,
        understood.kind,
        toParseOutput(understood),
        errorOf(understood),
        now,
        effectsOf(understood, message, now)
      )
      for (const accountId of outcome?.accounts ?? []) yield* reputation.evaluate(accountId, now)
      yield* Effect.logDebug("inbound message processed").pipe(Effect.annotateLogs({ kind: understood.kind }))
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("inbound message could not be processed; will retry", cause).pipe(
          Effect.zipRight(queue.fail(owner, message.id, message.attempts, String(cause), now)),
          Effect.catchAllCause((again) => Effect.logError("could not record the failure; the lease hands it out again", again))
        )),
      Effect.annotateLogs({ inbound_message_id: message.id })
    )

  const step = Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    const claimed = yield* queue.claim(owner, now, new Date(now.getTime() + LEASE_MS), batch)
    yield* Effect.forEach(claimed, (message) => handle(message, now), { concurrency, discard: true })
    return claimed.length === batch
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("inbound claim failed; retrying", cause).pipe(Effect.as(false))))

  const prune = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const pruned = yield* queue.prune(new Date(now - settings.retentionDays * 86_400_000))
    if (pruned > 0) yield* Effect.logInfo("raw inbound messages pruned").pipe(Effect.annotateLogs({ pruned }))
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("inbound prune failed", cause)))
  yield* Effect.forkScoped(Effect.repeat(prune, Schedule.spaced(Duration.hours(1))))

  yield* Effect.logInfo("inbound processor started").pipe(Effect.annotateLogs({ owner, parse_workers: workers }))
  yield* Effect.forever(Effect.gen(function*() {
    const more = yield* step
    if (!more) yield* Queue.take(wakeups).pipe(Effect.timeout(POLL), Effect.ignore)
  }))
})))
