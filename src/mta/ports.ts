/**
 * What the MTA's outcomes mean to bulk, as a port (DESIGN "Layout": the MTA imports nothing from
 * bulk; bulk provides the layer in src/bulk/hooks.ts and src/appliance.ts wires it). The queue
 * calls it inside the transaction that writes the outcome, so the fact commits with it (Effect's
 * SqlClient transactions follow the fiber).
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

/** A fact a delivery's outcome tells about its recipient's address in the account. */
export interface DeliveredFact {
  readonly accountId: string
  readonly email: string
  readonly at: Date
  readonly messageId: string
  readonly detail: string
}

export class DeliveryHooks extends Context.Tag("herald/DeliveryHooks")<DeliveryHooks, {
  /**
   * The SMTP transaction bounced the delivery with a reply that suppressed the address (the same
   * fact as a suppressing DSN: the address's history, and its account's active contacts `bounced`).
   */
  readonly addressBouncedAndSuppressed: (fact: DeliveredFact) => Effect.Effect<void, SqlError.SqlError>
  /** The simulator's `complaint` scenario complained about a campaign's message (history only: no contact status moves). */
  readonly campaignComplaintSimulated: (fact: DeliveredFact & { readonly campaignId: string }) => Effect.Effect<void, SqlError.SqlError>
}>() {}
