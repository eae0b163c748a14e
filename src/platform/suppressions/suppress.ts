/**
 * The automatic suppression written by the MTA and the inbound processor, inside their
 * transactions. An address already on the list keeps its first reason (a manual or unsubscribe
 * entry is not rewritten by a later bounce); the API's own `add` re-reasons on purpose instead.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SuppressionReason } from "./Suppressions.ts"

export const suppressAutomatically = (accountId: string, email: string, reason: SuppressionReason, source: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO suppressions (account_id, email, reason, source, created_at)
      VALUES (${accountId}, ${email.toLowerCase()}, ${reason}, ${source}, ${at})
      ON CONFLICT (coalesce(account_id, ''), email) DO NOTHING`
  ).pipe(Effect.asVoid)
