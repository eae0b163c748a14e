/**
 * What bulk does when the areas below it learn something about an address: the layers of the
 * ports they declare (DESIGN "Layout": they never import bulk; src/appliance.ts wires these).
 * - platform's SuppressionHooks: a suppression cancels the address's running sequence
 *   subscriptions (sequences/cancel-by-address.ts);
 * - the MTA's DeliveryHooks: an SMTP bounce that suppressed the address, and the simulator's
 *   complaint about a campaign's message, are facts of the address (contacts/engagement.ts);
 * - inbound's ReportHooks: a DSN's bounce, a feedback loop's complaint or opt-out, and a mail to
 *   the unsubscribe address (public/unsubscribe-by-mail.ts).
 * Each method runs in its caller's fiber, so inside the caller's transaction: the fact commits with
 * what caused it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { ReportHooks } from "../inbound/processor/ports.ts"
import { DeliveryHooks } from "../mta/ports.ts"
import { SuppressionHooks } from "../platform/suppressions/hooks.ts"
import { recordBounce, recordComplaint, recordFact } from "./contacts/engagement.ts"
import { unsubscribeAddress } from "./contacts/unsubscribe.ts"
import { PublicTokens } from "./public/tokens.ts"
import { applyUnsubscribeRequest } from "./public/unsubscribe-by-mail.ts"
import { UNSUBSCRIBE_LOCAL_PART } from "./public/unsubscribe-link.ts"
import { cancelSubscriptionsOfAddress } from "./sequences/cancel-by-address.ts"

export const SuppressionHooksLive = Layer.effect(SuppressionHooks, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    addressSuppressed: (s) =>
      cancelSubscriptionsOfAddress(s.accountId, s.email, s.reason, s.at).pipe(Effect.asVoid, Effect.provideService(SqlClient.SqlClient, sql))
  }
}))

export const DeliveryHooksLive = Layer.effect(DeliveryHooks, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    addressBouncedAndSuppressed: (fact) => recordBounce({ ...fact, suppressing: true }).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
    campaignComplaintSimulated: (fact) => recordFact("complained", fact).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }
}))

export const ReportHooksLive = Layer.effect(ReportHooks, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tokens = yield* PublicTokens
  const suppressionHooks = yield* SuppressionHooks
  // An unsubscribe suppresses the address, which tells the SuppressionHooks (the sequences).
  const withContext = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | SuppressionHooks>) =>
    effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(SuppressionHooks, suppressionHooks))
  return {
    unsubscribeLocalPart: UNSUBSCRIBE_LOCAL_PART,
    addressBounced: (fact) => withContext(recordBounce(fact)),
    addressComplained: (fact) => withContext(recordComplaint(fact)),
    addressOptedOut: (optOut) => withContext(unsubscribeAddress(optOut)).pipe(Effect.asVoid),
    unsubscribeRequested: (candidates, at) => withContext(applyUnsubscribeRequest(tokens, candidates, at))
  }
}))

/** Every layer above, needing the database and the public tokens' secret. */
export const BulkHooksLive = Layer.merge(DeliveryHooksLive, ReportHooksLive).pipe(Layer.provideMerge(SuppressionHooksLive))
