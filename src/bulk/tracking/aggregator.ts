/**
 * The `tracking-aggregator` actor: takes the hits the endpoints logged (ingest.ts) out of the log
 * and counts them (store.ts `foldHits`), one transaction per batch of up to AGGREGATE_BATCH: the
 * hits leave the log in the transaction that counts them, so each counts exactly once, and a failed
 * batch is rolled back into the log and tried again. Replicas each run one: SKIP LOCKED gives them
 * disjoint batches, and `foldHits` locks rows in one order so their batches never deadlock.
 *
 * Woken by this replica's recorder after each committed group of hits, and polling every second
 * for the other replicas' hits (and a lost wake-up).
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { takeHits } from "./ingest.ts"
import { TrackingRecorder } from "./recorder.ts"
import { foldHits } from "./store.ts"

const AGGREGATE_BATCH = 1_000
const POLL = Duration.seconds(1)

/** Counts one batch; answers how many hits it took out of the log. */
export const aggregateOnce = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const hits = yield* takeHits(AGGREGATE_BATCH)
    yield* foldHits(hits)
    return hits.length
  }))
})

export const TrackingAggregatorLive = actorLayer(
  "tracking-aggregator",
  Effect.gen(function*() {
    const recorder = yield* TrackingRecorder
    return yield* actorLoop("tracking-aggregator", Effect.gen(function*() {
      const taken = yield* aggregateOnce
      // A full batch: more may wait, go on at once. Otherwise until the next hit (or the poll).
      if (taken < AGGREGATE_BATCH) yield* recorder.awaitLogged(Duration.toMillis(POLL))
      return Duration.zero
    }))
  })
)
