/**
 * What an understood message changes, built for a group of messages completed together: the
 * deliveries the group names are read with one statement (mapping.ts), and each message gets the
 * effects of its kind (bounces.ts, complaints.ts, dmarc.ts; a mail to the unsubscribe address goes to
 * bulk through the ReportHooks port, ports.ts) — or none, which is what most reports
 * come to (nothing Herald sent is named), and then no transaction is needed at all. A report that
 * names deliveries only through its original's Message-ID acts as trust.ts decided: an
 * authenticated feedback loop's report on the recipients it names (the row records how it was
 * authenticated), or nothing but the refusal's reason on the row.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { InboundSettings } from "../InboundConfig.ts"
import { applyBounce, bouncePairs } from "./bounces.ts"
import { applyComplaint, complaintDeliveries } from "./complaints.ts"
import { storeDmarcReports } from "./dmarc.ts"
import type { Parsed } from "./InboundQueue.ts"
import type { SuppressionHooks } from "../../platform/suppressions/hooks.ts"
import { type DeliveryIndex, type DeliveryKeys, deliveryKeysOf, noKeys, type ReturnPathDecoder } from "./mapping.ts"
import { type ReportedDeliveries, ReportHooks } from "./ports.ts"
import type { Trust } from "./trust.ts"

/** What applying a message changed: the accounts whose reputation to look at. */
export interface Outcome {
  readonly accounts: ReadonlyArray<string>
}

const nothingMatched: Outcome = { accounts: [] }

/** What applying a message needs: the database and the ports its effects go through. */
export type EffectsContext = SqlClient.SqlClient | ReportedDeliveries | ReportHooks | SuppressionHooks

/** Where the deliveries a message is about are found: its VERP address and its returned original. */
export const keysOf = (parsed: Parsed, decode: ReturnPathDecoder): DeliveryKeys => {
  const understood = parsed.understood
  if (understood.kind === "bounce") return deliveryKeysOf(parsed.message.rcpt_to, understood.bounce.original, decode)
  if (understood.kind === "complaint") return deliveryKeysOf(parsed.message.rcpt_to, understood.complaint.original, decode)
  return noKeys
}

/** Records on the message's row why it was not acted on; it changes nothing else. */
const recordRefusal = (inboundId: string, reason: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE inbound_messages SET refusal = ${reason} WHERE id = ${inboundId}`).pipe(
    Effect.zipRight(Effect.logWarning("inbound report not acted on").pipe(Effect.annotateLogs({ inbound_message_id: inboundId, reason }))),
    Effect.as(nothingMatched)
  )

/** Records how the sender of a report acted on through its original's Message-ID was authenticated. */
const recordAuthenticated = <E, R>(inboundId: string, as: string, apply: Effect.Effect<Outcome, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE inbound_messages SET authenticated_as = ${as} WHERE id = ${inboundId}`).pipe(
    Effect.zipRight(apply)
  )

/**
 * What a message changes, given the deliveries its group names and, for a report naming them only
 * through its original's Message-ID, what trust.ts decided; null when it changes nothing.
 */
export const effectsOf = (
  parsed: Parsed,
  keys: DeliveryKeys,
  index: DeliveryIndex,
  settings: InboundSettings,
  trust: Trust | null = null
): Effect.Effect<Outcome, SqlError.SqlError, EffectsContext> | null => {
  const { understood, message, now } = parsed
  const ctx = { inboundId: message.id, settings, now }
  if (trust?._tag === "Refused") return recordRefusal(message.id, trust.reason)
  const byOriginal = trust?._tag === "Authenticated"
  const effects = ((): Effect.Effect<Outcome, SqlError.SqlError, EffectsContext> | null => {
    switch (understood.kind) {
      case "bounce": {
        const pairs = bouncePairs(understood.bounce, keys, index, byOriginal)
        return pairs.length === 0 ? null : applyBounce(pairs, ctx)
      }
      case "complaint": {
        const deliveries = complaintDeliveries(understood.complaint, keys, index, byOriginal)
        return deliveries.length === 0 ? null : applyComplaint(understood.complaint, deliveries, ctx)
      }
      case "dmarc":
        return understood.dmarc.length === 0 ? null : storeDmarcReports(understood.dmarc, ctx).pipe(Effect.as(nothingMatched))
      case "other":
        return null
      case "unsubscribe":
        // Recorded either way; a mail whose Subject names no token that opens changes nothing else.
        return Effect.flatMap(ReportHooks, (hooks) => hooks.unsubscribeRequested(understood.tokens, now)).pipe(
          Effect.flatMap((applied) => applied ? Effect.succeed(nothingMatched) : recordRefusal(message.id, "no valid unsubscribe token in the subject"))
        )
    }
  })()
  return effects !== null && trust?._tag === "Authenticated" ? recordAuthenticated(message.id, trust.as, effects) : effects
}
