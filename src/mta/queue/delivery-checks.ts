/**
 * What a delivery must still be allowed to do when its attempt comes, not only when it was
 * accepted: a queued or deferred delivery waits minutes to days, and meanwhile its recipient may be
 * suppressed (on its account's list or the platform's), its recipient domain blocked, its account
 * suspended or paused, its sending domain past the grace of a lost verification.
 *
 * The facts are read by the claim itself (`checksColumn`, one JSON column of the claim's
 * RETURNING, computed by index lookups in the same statement), so a claimed group costs no query
 * per delivery; `decideDelivery` turns them into what the attempt does. Every claim of outbound
 * mail (transactional now, campaign and sequence sends later) returns this column and asks this
 * function, so the rules are the same for every origin.
 *
 * A campaign's state is one of the facts: its pause holds the delivery, its cancel fails it.
 *
 * A pause (reputation) holds rather than fails: it is an admin's decision away from being lifted.
 * Held rows are marked (held_at) and looked at again every HOLD_RECHECK_MS, so they still fail at
 * the queue's maximum age; lifting the pause makes them due at once (`wakeHeldDeliveries`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isSimulatorAddress } from "../../lib/simulator.ts"
import { sendingAllowed } from "../../platform/domains/records.ts"

/** The delivery-time facts of one claimed delivery (the claim's `checks` column, JSON: times are ISO strings). */
export interface DeliveryChecks {
  readonly suspended: boolean
  /** The pause's reason while the account's sending is paused, else null. */
  readonly paused_reason: string | null
  /** The suppression that now covers the recipient (the account's own first), else null. */
  readonly suppression: { readonly reason: string; readonly scope: "account" | "platform" } | null
  readonly recipient_domain_blocked: boolean
  /** The sending domain's row as it is now; null when it was removed (the attempt fails that itself). */
  readonly sending_domain: {
    readonly domain: string
    readonly verified_at: string | null
    readonly verification_lost_at: string | null
  } | null
  /** The state of the campaign the message belongs to (paused holds, cancelled fails); null for other mail. */
  readonly campaign_status?: string | null | undefined
  /** The message is a sequence step whose subscription is held for `render_failed` (src/bulk/sequences/hold-render-failed.ts). */
  readonly sequence_render_held?: boolean | undefined
}

/** What the attempt of a claimed delivery does. */
export type DeliveryDecision =
  | { readonly _tag: "attempt" }
  | { readonly _tag: "fail"; readonly status: string; readonly reason: string }
  | { readonly _tag: "hold"; readonly reason: string }

/** How long a held delivery waits before it is looked at again (when its pause is not lifted first). */
export const HOLD_RECHECK_MS = 10 * 60_000

/**
 * The `checks` column for a claim's RETURNING (or select list): the delivery row must be aliased
 * `d`. Each part is a lookup by primary key or index (accounts, suppressions_email,
 * blocked_domains, messages, domains_account_domain), evaluated for the claimed rows only.
 */
export const checksColumn = (sql: SqlClient.SqlClient) =>
  sql`json_build_object(
    'suspended', EXISTS (SELECT 1 FROM accounts a WHERE a.id = d.account_id AND a.status = 'suspended'),
    'paused_reason', (SELECT coalesce(a.sending_paused_reason, 'sending paused') FROM accounts a
      WHERE a.id = d.account_id AND a.sending_paused_at IS NOT NULL),
    'suppression', (SELECT json_build_object('reason', s.reason, 'scope', CASE WHEN s.account_id IS NULL THEN 'platform' ELSE 'account' END)
      FROM suppressions s WHERE s.email = lower(d.recipient) AND (s.account_id = d.account_id OR s.account_id IS NULL)
      ORDER BY s.account_id NULLS LAST LIMIT 1),
    'recipient_domain_blocked', EXISTS (SELECT 1 FROM blocked_domains b WHERE b.domain = lower(d.recipient_domain)),
    'sending_domain', (SELECT json_build_object('domain', m.from_domain, 'verified_at', s.verified_at, 'verification_lost_at', s.verification_lost_at)
      FROM messages m JOIN domains s ON s.account_id = m.account_id AND s.domain = m.from_domain WHERE m.id = d.message_id),
    'campaign_status', (SELECT c.status FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.id = d.message_id),
    'sequence_render_held', ${sequenceRenderHeld(sql)}
  ) AS checks`

/**
 * Whether the row `d` is a sequence step held because its content's render was stopped three
 * times (the subscription paused with `hold_reason = 'render_failed'`): held, not rendered again,
 * until the subscription is resumed. One lookup by the subscriptions' (sequence, contact) key.
 */
export const sequenceRenderHeld = (sql: SqlClient.SqlClient) =>
  sql`EXISTS (SELECT 1 FROM messages m JOIN sequence_subscriptions s
      ON s.sequence_id = m.content->>'sequence_id' AND s.contact_id = m.content->>'contact_id'
    WHERE m.id = d.message_id AND m.origin = 'sequence' AND s.state = 'paused' AND s.hold_reason = 'render_failed')`

const dateOf = (iso: string | null) => (iso === null ? null : new Date(iso))

/**
 * Whether `d` may be attempted now (pure). Failures are final and name their reason; a pause holds.
 * Simulator recipients skip the sending-domain check only (they are how a sender tries Herald
 * before its domain is verified); every other check applies to them too.
 */
export const decideDelivery = (
  d: { readonly recipient: string; readonly recipient_domain: string; readonly checks: DeliveryChecks },
  now: Date,
  domainGraceHours: number
): DeliveryDecision => {
  const c = d.checks
  if (c.suspended) return { _tag: "fail", status: "5.7.1", reason: "account suspended" }
  if (c.suppression !== null) {
    const list = c.suppression.scope === "platform" ? " on the platform list" : ""
    return { _tag: "fail", status: "5.7.1", reason: `recipient suppressed${list} (${c.suppression.reason}) since acceptance` }
  }
  if (c.recipient_domain_blocked) return { _tag: "fail", status: "5.7.1", reason: `recipient domain ${d.recipient_domain} blocked` }
  if (c.sending_domain !== null && !isSimulatorAddress(d.recipient)) {
    const { domain } = c.sending_domain
    const state = sendingAllowed(
      { verifiedAt: dateOf(c.sending_domain.verified_at), verificationLostAt: dateOf(c.sending_domain.verification_lost_at) },
      now,
      domainGraceHours
    )
    if (state === "grace_expired") return { _tag: "fail", status: "5.7.0", reason: `sending domain ${domain} unverified past its grace` }
    if (state === "unverified") return { _tag: "fail", status: "5.7.0", reason: `sending domain ${domain} unverified` }
  }
  if (c.campaign_status === "cancelled") return { _tag: "fail", status: "5.0.0", reason: "campaign cancelled" }
  if (c.paused_reason !== null) return { _tag: "hold", reason: `account sending paused (${c.paused_reason})` }
  if (c.campaign_status === "paused") return { _tag: "hold", reason: "campaign paused" }
  if (c.sequence_render_held === true) return { _tag: "hold", reason: "sequence subscription held (render_failed)" }
  return { _tag: "attempt" }
}

/**
 * Makes the deliveries held for `accountId`'s pause due now: called where a pause is lifted.
 * Rows another claim holds right now are left alone (their hold re-reads the pause, see
 * DeliveryQueue.hold).
 */
export const wakeHeldDeliveries = (accountId: string, now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE deliveries SET next_attempt_at = ${now}, held_at = NULL
      WHERE account_id = ${accountId} AND held_at IS NOT NULL AND state IN ('queued', 'deferred') AND next_attempt_at > ${now}`).pipe(
    Effect.asVoid
  )
