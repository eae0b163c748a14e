/**
 * What the inbound processor needs of the other areas, as ports (DESIGN "Layout": inbound stands
 * beside the MTA and below bulk, so it imports neither; src/appliance.ts wires the layers):
 * - ReportedDeliveries, the MTA's: the queue's deliveries a report names (a read model, decoded),
 *   the one change a late DSN makes to a delivery, the VERP return path and the reply rules.
 * - ReportHooks, bulk's: what a report or a mail to the unsubscribe address tells about an address
 *   (its engagement history, its contacts' status, an unsubscribe by token).
 * Every method that writes runs in the caller's fiber, so inside the transaction that marks the
 * inbound message processed (Effect's SqlClient transactions follow the fiber).
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

/** A delivery as a report about it needs it (the queue's read model, decoded there). */
export interface DeliveryRef {
  readonly id: string
  readonly message_id: string
  readonly account_id: string
  readonly key_id: string
  readonly recipient: string
  readonly state: string
  readonly subject: string
  /** The campaign whose message it is, if any (its analytics count the complaints about it). */
  readonly campaign_id: string | null
}

/** A DSN arriving after the delivery was handed over (DESIGN "Bounces"). */
export interface LateBounce {
  readonly deliveryId: string
  readonly status: string
  readonly diagnostic: string | null
  readonly now: Date
}

export class ReportedDeliveries extends Context.Tag("herald/ReportedDeliveries")<ReportedDeliveries, {
  /** The delivery a VERP return path names, when its tag checks out; null for any other address. */
  readonly deliveryOfReturnPath: (address: string) => string | null
  /** The deliveries with one of `deliveryIds` or of one of `messageIds` (one statement; none when both are empty). */
  readonly find: (deliveryIds: ReadonlyArray<string>, messageIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<DeliveryRef>, SqlError.SqlError>
  /** A final DSN for this delivery came: it turns `bounced`. False when it already was (a duplicate DSN). */
  readonly bouncedAfterHandover: (bounce: LateBounce) => Effect.Effect<boolean, SqlError.SqlError>
  /** Whether a hard bounce with this status (and diagnostic text) puts the address on the suppression list. */
  readonly suppressesAddress: (status: string, text: string) => boolean
}>() {}

/** A fact a report tells about an address in an account. */
export interface ReportedFact {
  readonly accountId: string
  readonly email: string
  readonly at: Date
  readonly messageId: string
  readonly detail: string
}

export class ReportHooks extends Context.Tag("herald/ReportHooks")<ReportHooks, {
  /** The local part of the unsubscribe address on the bounce domain (the mailto of every bulk message). */
  readonly unsubscribeLocalPart: string
  /** A DSN failed a delivery for good; `suppressing`: it also put the address on the suppression list. */
  readonly addressBounced: (fact: ReportedFact & { readonly suppressing: boolean }) => Effect.Effect<void, SqlError.SqlError>
  /** A feedback loop reported an abuse, fraud or virus complaint about the campaign's (or other) message. */
  readonly addressComplained: (fact: ReportedFact & { readonly campaignId: string | null }) => Effect.Effect<void, SqlError.SqlError>
  /** A feedback loop reported an opt-out: an unsubscribe of the address in the account. */
  readonly addressOptedOut: (optOut: { readonly accountId: string; readonly email: string; readonly source: string; readonly at: Date }) => Effect.Effect<void, SqlError.SqlError>
  /**
   * A mail to the unsubscribe address arrived whose Subject holds these token candidates: the first
   * that opens as an unsubscribe token is applied. False when none opens (nothing changed).
   */
  readonly unsubscribeRequested: (candidates: ReadonlyArray<string>, at: Date) => Effect.Effect<boolean, SqlError.SqlError>
}>() {}
