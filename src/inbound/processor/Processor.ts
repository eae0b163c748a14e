/**
 * The inbound actor: a short story of named steps for each message the MX listener committed.
 * claim (leased) → understand (the pure parsers) → apply what it means (bounce, complaint or
 * DMARC effects, in the same transaction that marks the message processed) → let reputation look
 * at the accounts touched. A message whose parse or effects fail is retried with growing pauses
 * and finally parked as `failed` with its error; its raw bytes stay until the retention prune.
 * Wakes on the listener's signal (herald_inbound) and polls every 2 s for retries.
 */
import { Clock, Duration, Effect, Queue, Schedule } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { actorLayer } from "../../lib/actor.ts"
import { randomBase62 } from "../../lib/ids.ts"
import { QueueSignal } from "../../mta/queue/QueueSignal.ts"
import { VerpSecret } from "../../mta/VerpSecret.ts"
import { Reputation } from "../../platform/reputation/Reputation.ts"
import { InboundConfig } from "../InboundConfig.ts"
import { toParseOutput } from "../parse-output.ts"
import type { Understood } from "../parse/types.ts"
import { understandMessage } from "../understand.ts"
import { applyBounce } from "./bounces.ts"
import { applyComplaint } from "./complaints.ts"
import { storeDmarcReports } from "./dmarc.ts"
import { type ClaimedInbound, InboundQueue } from "./InboundQueue.ts"

export const INBOUND_CHANNEL = "herald_inbound"
const BATCH = 8
const LEASE_MS = 5 * 60_000
const POLL = Duration.seconds(2)

export const InboundProcessorLive = actorLayer("inbound", Effect.gen(function*() {
  const settings = yield* InboundConfig
  if (!settings.enabled) return yield* Effect.logInfo("inbound processing is disabled (HERALD_INBOUND_ENABLED=false)")
  const config = yield* AppConfig
  const queue = yield* InboundQueue
  const reputation = yield* Reputation
  const verpSecret = (yield* VerpSecret).value
  const wakeups = yield* (yield* QueueSignal).subscribe
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`

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
      const understood = yield* Effect.tryPromise(() => understandMessage(message.raw!))
      const outcome = yield* queue.complete(
        owner,
        message.id,
        understood.kind,
        toParseOutput(understood),
        "error" in understood && understood.error !== undefined ? understood.error : null,
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
    const claimed = yield* queue.claim(owner, now, new Date(now.getTime() + LEASE_MS), BATCH)
    yield* Effect.forEach(claimed, (message) => handle(message, now), { concurrency: 2, discard: true })
    return claimed.length === BATCH
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("inbound claim failed; retrying", cause).pipe(Effect.as(false))))

  const prune = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const pruned = yield* queue.prune(new Date(now - settings.retentionDays * 86_400_000))
    if (pruned > 0) yield* Effect.logInfo("raw inbound messages pruned").pipe(Effect.annotateLogs({ pruned }))
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("inbound prune failed", cause)))
  yield* Effect.forkScoped(Effect.repeat(prune, Schedule.spaced(Duration.hours(1))))

  yield* Effect.logInfo("inbound processor started").pipe(Effect.annotateLogs({ owner }))
  yield* Effect.forever(Effect.gen(function*() {
    const more = yield* step
    if (!more) yield* Queue.take(wakeups).pipe(Effect.timeout(POLL), Effect.ignore)
  }))
}))
