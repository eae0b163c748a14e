/**
 * What an understood message changes, built for a group of messages completed together: the
 * deliveries the group names are read with one statement (mapping.ts), and each message gets the
 * effects of its kind (bounces.ts, complaints.ts, dmarc.ts) — or none, which is what most reports
 * come to (nothing Herald sent is named), and then no transaction is needed at all.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { InboundSettings } from "../InboundConfig.ts"
import type { Understood } from "../parse/types.ts"
import { applyBounce, bouncePairs } from "./bounces.ts"
import { applyComplaint, complaintDeliveries } from "./complaints.ts"
import { storeDmarcReports } from "./dmarc.ts"
import type { ClaimedInbound } from "./InboundQueue.ts"
import { type DeliveryIndex, type DeliveryKeys, deliveryKeysOf, noKeys } from "./mapping.ts"

/** A claimed message and what the parsers made of it. */
export interface Parsed {
  readonly message: ClaimedInbound
  readonly understood: Understood
  readonly now: Date
}

/** What applying a message changed: the accounts whose reputation to look at. */
export interface Outcome {
  readonly accounts: ReadonlyArray<string>
}

const nothingMatched: Outcome = { accounts: [] }

/** Where the deliveries a message is about are found: its VERP address and its returned original. */
export const keysOf = (parsed: Parsed, verpSecret: string): DeliveryKeys => {
  const understood = parsed.understood
  if (understood.kind === "bounce") return deliveryKeysOf(parsed.message.rcpt_to, understood.bounce.original, verpSecret)
  if (understood.kind === "complaint") return deliveryKeysOf(parsed.message.rcpt_to, understood.complaint.original, verpSecret)
  return noKeys
}

/** What a message changes, given the deliveries its group names; null when it changes nothing. */
export const effectsOf = (
  parsed: Parsed,
  keys: DeliveryKeys,
  index: DeliveryIndex,
  settings: InboundSettings
): Effect.Effect<Outcome, SqlError.SqlError, SqlClient.SqlClient> | null => {
  const { understood, message, now } = parsed
  const ctx = { inboundId: message.id, settings, now }
  switch (understood.kind) {
    case "bounce": {
      const pairs = bouncePairs(understood.bounce, keys, index)
      return pairs.length === 0 ? null : applyBounce(pairs, ctx)
    }
    case "complaint": {
      const deliveries = complaintDeliveries(understood.complaint, keys, index)
      return deliveries.length === 0 ? null : applyComplaint(understood.complaint, deliveries, ctx)
    }
    case "dmarc":
      return understood.dmarc.length === 0 ? null : storeDmarcReports(understood.dmarc, ctx).pipe(Effect.as(nothingMatched))
    case "other":
      return null
  }
}
