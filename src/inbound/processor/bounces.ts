/**
 * What a bounce changes, per recipient, inside the transaction that marks the inbound message
 * processed (DESIGN "Bounces"):
 * - `failed` (or any final action): the delivery turns `bounced` (audit `failed`) even when it was
 *   `sent` — the far side accepted it and gave up later — and `email.bounced` is emitted once;
 *   a DSN for a delivery already bounced changes nothing (remote MTAs do send duplicates).
 * - `delayed`: the far side is still trying: recorded and reported as a soft `email.bounced`,
 *   the delivery's state stays as it is.
 * - hard bounces with a suppressing status (5.1.x, 5.2.1, code-less "user unknown") suppress the
 *   address for the account; soft bounces escalate: `softBounceLimit` of them for one address
 *   within `softBounceWindowDays` suppress it too (reason bounce, source says why).
 * A bounce is about the delivery its VERP address names. One that reached another address names
 * deliveries only through the returned original's Message-ID, which every recipient of the message
 * knows: it is acted on only when trust.ts found its sender an authenticated feedback loop, and
 * only for the recipients it names — a forged DSN naming a co-recipient changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { EmailBounced } from "../../events/schema.ts"
import { suppressAutomatically } from "../../platform/suppressions/suppress.ts"
import type { InboundSettings } from "../InboundConfig.ts"
import type { BounceReport, BouncedRecipient } from "../parse/types.ts"
import { deliveriesByOriginal, type DeliveryIndex, type DeliveryKeys, deliveryByVerp } from "./mapping.ts"
import { type DeliveryRef, ReportedDeliveries, ReportHooks } from "./ports.ts"

export interface BounceContext {
  readonly inboundId: string
  readonly settings: InboundSettings
  readonly now: Date
}

export type BouncePair = readonly [DeliveryRef, BouncedRecipient]

/**
 * Each bounced recipient paired with its delivery: the one the VERP address names, else — when
 * `byOriginal` — those of the original to the recipients the bounce names.
 */
export const bouncePairs = (report: BounceReport, keys: DeliveryKeys, index: DeliveryIndex, byOriginal: boolean): ReadonlyArray<BouncePair> => {
  const byVerp = deliveryByVerp(index, keys)
  if (byVerp !== null) {
    // The VERP address names exactly one delivery; a forwarding hop may report another address.
    const match = report.recipients.find((r) => r.email === byVerp.recipient.toLowerCase()) ?? report.recipients[0]
    return match === undefined ? [] : [[byVerp, match]]
  }
  const pairs: Array<BouncePair> = []
  if (!byOriginal) return pairs
  for (const d of deliveriesByOriginal(index, keys, report.recipients.map((r) => r.email))) {
    const match = report.recipients.find((r) => r.email === d.recipient.toLowerCase())
    if (match !== undefined) pairs.push([d, match])
  }
  return pairs
}

/** Applies each pair; returns the accounts touched. */
export const applyBounce = (pairs: ReadonlyArray<BouncePair>, ctx: BounceContext) =>
  Effect.gen(function*() {
    for (const [delivery, recipient] of pairs) yield* applyOne(delivery, recipient, ctx)
    return { accounts: [...new Set(pairs.map(([d]) => d.account_id))] }
  })

const applyOne = (d: DeliveryRef, r: BouncedRecipient, ctx: BounceContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deliveries = yield* ReportedDeliveries
    const final = r.action !== "delayed"
    if (final) {
      const changed = yield* deliveries.bouncedAfterHandover({ deliveryId: d.id, status: r.status, diagnostic: r.diagnostic, now: ctx.now })
      if (!changed) return
    }
    yield* sql`
      INSERT INTO inbound_bounces (inbound_message_id, account_id, key_id, delivery_id, message_id, email, status,
        category, action, diagnostic, created_at)
      VALUES (${ctx.inboundId}, ${d.account_id}, ${d.key_id}, ${d.id}, ${d.message_id}, ${r.email}, ${r.status},
        ${r.class}, ${r.action}, ${r.diagnostic}, ${ctx.now})`
    yield* emitEvent({
      accountId: d.account_id,
      keyId: d.key_id,
      event: EmailBounced.make({ recipient: d.recipient, status: r.status, category: r.class, diagnostic: r.diagnostic, message_id: d.message_id }),
      at: ctx.now
    })
    let suppressing = false
    if (r.class === "hard" && deliveries.suppressesAddress(r.status, r.diagnostic ?? "")) {
      yield* suppressAutomatically(d.account_id, d.recipient, "bounce", `dsn ${r.status}`, ctx.now)
      suppressing = true
    } else if (r.class === "soft") {
      const since = new Date(ctx.now.getTime() - ctx.settings.softBounceWindowDays * 86_400_000)
      const [row] = yield* sql<{ soft: number }>`
        SELECT count(*)::int AS soft FROM inbound_bounces
        WHERE account_id = ${d.account_id} AND email = ${r.email} AND category = 'soft' AND created_at >= ${since}`
      if (row!.soft >= ctx.settings.softBounceLimit) {
        const source = `${row!.soft} soft bounces within ${ctx.settings.softBounceWindowDays} days`
        yield* suppressAutomatically(d.account_id, d.recipient, "bounce", source, ctx.now)
        suppressing = true
      }
    }
    // The address's history, and its contacts' status when the bounce suppresses it (bulk's ReportHooks).
    if (final) {
      const detail = [r.status, r.diagnostic].filter((part) => part !== null && part !== "").join(" ")
      yield* (yield* ReportHooks).addressBounced({ accountId: d.account_id, email: d.recipient, at: ctx.now, messageId: d.message_id, detail, suppressing })
    }
  })
