/**
 * The one figure of the reputation policy that lives in the queue's tables (DESIGN "Layout": the
 * queue is the MTA's): how many of an account's deliveries reached a final handover (`sent` or
 * `bounced`) since a moment, simulator deliveries not counted (src/lib/simulator.ts). A port:
 * the MTA provides it as a read model of `deliveries` (src/mta/queue/report-reads.ts, wired by
 * src/appliance.ts), so platform reads no table above it.
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

export class DeliveredCounts extends Context.Tag("herald/DeliveredCounts")<DeliveredCounts, {
  readonly completedSince: (accountId: string, since: Date) => Effect.Effect<number, SqlError.SqlError>
}>() {}
