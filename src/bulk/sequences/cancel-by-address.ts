/**
 * A suppression ends the address's running sequences (DESIGN "Unsubscribe and suppression are one
 * fact"): every active or paused subscription of the address in the account — in every account
 * for a platform suppression — is cancelled with the reason mapped from the suppression's, and
 * emits one `sequence.cancelled` to its sequence's key. Called by the one INSERT into
 * `suppressions` (src/platform/suppressions/suppress.ts) inside its transaction, so no path that
 * suppresses (unsubscribe, bounce, complaint, an API or operator entry) can miss it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { SequenceCancelled } from "../../events/schema.ts"
import type { CancelReason } from "./records.ts"

export type SuppressionCause = "bounce" | "complaint" | "unsubscribe" | "manual"

export const cancelReasonOf = (cause: SuppressionCause): CancelReason => {
  switch (cause) {
    case "unsubscribe":
      return "unsubscribed"
    case "bounce":
      return "bounced"
    case "complaint":
      return "complained"
    default:
      return "suppressed"
  }
}

/**
 * Cancels the running subscriptions of a contact about to be deleted, reason `manual` (issue 30
 * item 5): one `sequence.cancelled` each, in the caller's transaction, before the delete leaves the
 * subscriptions without their contact (they stay, so the address is not enrolled again).
 */
export const cancelSubscriptionsOfContact = (contactId: string, at: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cancelled = yield* sql<{ account_id: string; key_id: string; sequence_id: string; email: string }>`
      UPDATE sequence_subscriptions SET state = 'cancelled', reason = 'manual', next_due_at = NULL, finished_at = ${at}, updated_at = ${at}
      WHERE contact_id = ${contactId} AND state IN ('active', 'paused')
      RETURNING account_id, key_id, sequence_id, email`
    for (const row of cancelled) {
      yield* emitEvent({
        accountId: row.account_id,
        keyId: row.key_id,
        event: SequenceCancelled.make({ email: row.email, campaign_id: row.sequence_id, reason: "manual" }),
        at
      })
    }
    return cancelled.length
  })

/** Cancels the address's running subscriptions (`accountId` null: every account's); answers how many. */
export const cancelSubscriptionsOfAddress = (accountId: string | null, email: string, cause: SuppressionCause, at: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reason = cancelReasonOf(cause)
    const cancelled = yield* sql<{ account_id: string; key_id: string; sequence_id: string; email: string }>`
      UPDATE sequence_subscriptions SET state = 'cancelled', reason = ${reason}, next_due_at = NULL, finished_at = ${at}, updated_at = ${at}
      WHERE lower(email) = ${email.toLowerCase()} AND state IN ('active', 'paused')
        ${accountId === null ? sql`` : sql`AND account_id = ${accountId}`}
      RETURNING account_id, key_id, sequence_id, email`
    for (const row of cancelled) {
      yield* emitEvent({
        accountId: row.account_id,
        keyId: row.key_id,
        event: SequenceCancelled.make({ email: row.email, campaign_id: row.sequence_id, reason }),
        at
      })
    }
    return cancelled.length
  })
