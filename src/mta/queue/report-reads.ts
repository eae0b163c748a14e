/**
 * Read models of the queue's tables for the areas that must not read them directly (docs/architecture.md "Who
 * owns which table"): the deliveries an inbound report names (src/inbound/processor/mapping.ts,
 * through its ReportedDeliveries port) and the completed deliveries the reputation policy counts
 * (src/platform/reputation/DeliveredCounts.ts). Rows are decoded (SqlSchema), not cast: a row that
 * does not match its schema is a bug of this module (the SQL and the schema disagree), so it is a
 * defect rather than an error the callers could handle.
 */
import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { SIMULATOR_DOMAIN } from "../../lib/simulator.ts"

/** A delivery as a report about it needs it: who sent it, to whom, its state and its message's subject and campaign. */
export const ReportedDelivery = Schema.Struct({
  id: Schema.String,
  message_id: Schema.String,
  account_id: Schema.String,
  key_id: Schema.String,
  recipient: Schema.String,
  state: Schema.String,
  subject: Schema.String,
  campaign_id: Schema.NullOr(Schema.String)
})
export type ReportedDelivery = typeof ReportedDelivery.Type

const orDieOnDecode = <A>(read: Effect.Effect<A, SqlError.SqlError | ParseError>) =>
  read.pipe(Effect.catchTag("ParseError", (error) => Effect.die(error)))

/**
 * The deliveries with one of `deliveryIds` (the VERP addresses' ids) or of one of `messageIds`
 * (the returned originals'), in one statement; none read when both lists are empty.
 */
export const readReportedDeliveries = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const find = SqlSchema.findAll({
    Request: Schema.Struct({ deliveryIds: Schema.Array(Schema.String), messageIds: Schema.Array(Schema.String) }),
    Result: ReportedDelivery,
    execute: ({ deliveryIds, messageIds }) => sql`
      SELECT d.id, d.message_id, d.account_id, d.key_id, d.recipient, d.state, m.subject, m.campaign_id
      FROM deliveries d JOIN messages m ON m.id = d.message_id
      WHERE (d.id = ANY(${deliveryIds}) OR d.message_id = ANY(${messageIds}))
        -- System mail (a TLS report) has no account: a bounce or complaint about it acts on nothing.
        AND d.account_id IS NOT NULL`
  })
  return (deliveryIds: ReadonlyArray<string>, messageIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<ReportedDelivery>, SqlError.SqlError> =>
    deliveryIds.length === 0 && messageIds.length === 0 ? Effect.succeed([]) : orDieOnDecode(find({ deliveryIds, messageIds }))
})

/** How many of `accountId`'s deliveries were handed over (`sent`) or bounced since `since`, simulator deliveries left out. */
export const readCompletedSince = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const count = SqlSchema.single({
    Request: Schema.Struct({ accountId: Schema.String, since: Schema.DateFromSelf }),
    Result: Schema.Struct({ delivered: Schema.Int }),
    execute: ({ accountId, since }) => sql`
      SELECT count(*)::int AS delivered FROM deliveries WHERE account_id = ${accountId} AND state IN ('sent', 'bounced')
        AND completed_at >= ${since} AND recipient_domain <> ${SIMULATOR_DOMAIN}`
  })
  return (accountId: string, since: Date): Effect.Effect<number, SqlError.SqlError> =>
    count({ accountId, since }).pipe(
      Effect.map((row) => row.delivered),
      // count(*) answers exactly one row: none would be a bug, like a row that does not decode.
      Effect.catchTags({ ParseError: (error) => Effect.die(error), NoSuchElementException: (error) => Effect.die(error) })
    )
})
