/**
 * One message's progress in the queue, as SQL fragments over a message id expression
 * (`sql\`x.message_id\``): the sequences' step scheduler completes a subscription once its last
 * step's message is final, in one UPDATE over many subscriptions, so these compose into that
 * statement rather than cost a round trip per subscription. The queue still owns the SQL.
 */
import type { SqlClient } from "@effect/sql"

/** When the message's last delivery became final (NULL while none has). */
export const messageLastCompletedAt = (sql: SqlClient.SqlClient, messageId: unknown) =>
  sql`(SELECT max(d.completed_at) FROM deliveries d WHERE d.message_id = ${messageId})`

/** True while a delivery of the message is not final. */
export const messageHasOpenDeliveries = (sql: SqlClient.SqlClient, messageId: unknown) =>
  sql`EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = ${messageId} AND d.state IN ('queued', 'deferred'))`
