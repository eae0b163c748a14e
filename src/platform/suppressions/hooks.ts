/**
 * What a suppression means to the areas above platform (DESIGN "Unsubscribe and suppression are
 * one fact"): a port. The one INSERT into `suppressions` (suppress.ts) tells it of every row it
 * wrote, inside its own transaction, so no path that suppresses (unsubscribe, bounce, complaint, an
 * API or operator entry) can miss what depends on it. Bulk provides the layer (it cancels the
 * address's running sequence subscriptions: src/bulk/hooks.ts); src/appliance.ts wires it. The
 * method runs in the caller's fiber, so Effect's SqlClient transaction is the caller's.
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

export type SuppressionReason = "bounce" | "complaint" | "unsubscribe" | "manual"

export interface SuppressedAddress {
  /** null: the platform list, which applies to every account. */
  readonly accountId: string | null
  readonly email: string
  readonly reason: SuppressionReason
  readonly at: Date
}

export class SuppressionHooks extends Context.Tag("herald/SuppressionHooks")<SuppressionHooks, {
  /** This address was just put on a suppression list (a new row, not one already there). */
  readonly addressSuppressed: (suppressed: SuppressedAddress) => Effect.Effect<void, SqlError.SqlError>
}>() {}
