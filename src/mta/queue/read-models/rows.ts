/**
 * Rows of the queue's tables as the read models hand them to other areas: decoded with a schema
 * at the boundary, not cast. The queue owns these tables and their migrations, so a row that does
 * not decode is a bug of the queue (a defect), not an error a caller could handle.
 */
import { Effect, Schema } from "effect"

/** The rows of `query`, each decoded with `Row`. */
export const decodedRows = <A, I, E, R>(Row: Schema.Schema<A, I>, query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
  Effect.flatMap(query, (rows) => Effect.orDie(Schema.decodeUnknown(Schema.Array(Row))(rows)))

/** PostgreSQL's `count(*)` (a bigint, which the driver hands over as a string) as a number. */
export const Count = Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int()))
