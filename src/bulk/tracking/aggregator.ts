/**
 * The `tracking-aggregator` actor: takes the hits the endpoints logged (ingest.ts) out of the log
 * and counts them (fold.ts `foldHits`), one transaction per batch of up to AGGREGATE_BATCH: the
 * hits leave the log in the transaction that counts them, so each counts exactly once, and a failed
 * batch is rolled back into the log and tried again. Replicas each run one: SKIP LOCKED gives them
 * disjoint batches, and `foldHits` locks rows in one order so their batches never deadlock.
 *
 * Woken by this replica's recorder after each committed group of hits, and polling every second
 * for the other replicas' hits (and a lost wake-up). A batch that was not full is followed by a
 * pause of GATHER before the next, so that hits arriving steadily are counted a few hundred at a
 * time: a batch costs a dozen statements whatever its size, and woken at every committed group
 * the aggregator made more statements than the endpoints themselves (bench/campaign.ts).
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { takeHits } from "./ingest.ts"
import { TrackingRecorder } from "./recorder.ts"
import { foldHits } from "./fold.ts"

const AGGREGATE_BATCH = 1_000
const POLL = Duration.seconds(1)
const GATHER = Duration.millis(250)

/** Counts one batch, each token's repeats within `repeatMs` not (windows.ts); answers how many hits it took out of the log. */
export const aggregateOnce = (repeatMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const hits = yield* takeHits(AGGREGATE_BATCH)
      yield* foldHits(hits, repeatMs)
      return hits.length
    }))
  })

export const TrackingAggregatorLive = actorLayer(
  "tracking-aggregator",
  Effect.gen(function*() {
    const recorder = yield* TrackingRecorder
    const { trackingRepeatMs } = yield* AppConfig
    return yield* actorLoop("tracking-aggregator", Effect.gen(function*() {
      const taken = yield* aggregateOnce(trackingRepeatMs)
      // A full batch: more may wait, go on at once. Otherwise until the next hit (or the poll), and a moment more.
      if (taken >= AGGREGATE_BATCH) return Duration.zero
      yield* recorder.awaitLogged(Duration.toMillis(POLL))
      return GATHER
    }))
  })
)
