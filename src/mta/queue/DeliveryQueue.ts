/**
 * The outbound queue in PostgreSQL: one row per recipient delivery (the rows the sending API
 * commits with its 202). Claims take due rows with FOR UPDATE SKIP LOCKED; the lease *is* the row's
 * next_attempt_at, pushed forward by the claim and refreshed while the work runs, so a crashed
 * replica's rows simply fall due again when its lease runs out — nothing else needs to notice.
 *
 * Claim plan (checked in test/mta/queue-plan.test.ts): an index scan of the partial index
 * deliveries_due, stopping after LIMIT rows, whatever the queue's length; the claimed rows are then
 * updated through the primary key (`id = ANY(ARRAY(…))`). Joining the subquery back instead
 * (`UPDATE … FROM (…) due WHERE d.id = due.id`) let the planner pick a hash join over a sequential
 * scan of every delivery, history included, once the table held 10,000 rows.
 *
 * Every claim counts itself in claims_since_outcome, and every written outcome sets it back to 0
 * (work given back unattempted takes its claim back): a delivery whose attempts keep ending with no
 * outcome — the process dies during them, the lease runs out, the row is claimed again — is
 * recognised by its count and failed (Delivery.ts) instead of crashing the MTA at every lease
 * expiry. `attempts` counts attempts that reached an outcome, as before.
 */
import { SqlClient } from "@effect/sql"
import { outboxRow } from "../../events/outbox.ts"
import { type DeliveryFacts, type Origin, outcomeEvent } from "../../events/outcomes.ts"
import { Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import { isSimulatorAddress } from "../../lib/simulator.ts"
import { SuppressionHooks } from "../../platform/suppressions/hooks.ts"
import { suppressAutomatically } from "../../platform/suppressions/suppress.ts"
import { DeliveryHooks } from "../ports.ts"
import { checksColumn, type DeliveryChecks, sequenceRenderHeld } from "./delivery-checks.ts"
import type { Channel } from "./StoredMessage.ts"

export interface ClaimedDelivery {
  readonly id: string
  readonly message_id: string
  /** Both null for system mail, which belongs to no account (migrations/0042_system_messages.sql). */
  readonly account_id: string | null
  readonly key_id: string | null
  readonly recipient: string
  readonly recipient_domain: string
  readonly attempts: number
  /** Claims since the last recorded outcome, this one included (1 for a delivery whose previous attempt ended normally). */
  readonly claims_since_outcome: number
  readonly created_at: Date
  /** The size of the message's request (what the MTA's memory budget counts). */
  readonly content_bytes: number
  /** What the delivery must still be allowed to do, read by the claim (delivery-checks.ts). */
  readonly checks: DeliveryChecks
  /** The lane it was claimed in. */
  readonly channel: Channel
}

export interface MessageForDelivery {
  readonly id: string
  readonly request_id: string
  readonly from_domain: string
  readonly subject: string
  /** Which events its outcomes emit (a column: known even when the stored message does not decode). */
  readonly origin: Origin
  /** The campaign or sequence id of a bulk message (read from its stored form), else null. */
  readonly origin_ref: string | null
  /**
   * The stored message's two parts as read (StoredMessage.ts decodes them): `content` is the
   * message's own (`messages.content`), `shared` the request's (`message_contents`, null for rows
   * of older versions). Both null when the load did not ask for them.
   */
  readonly content: unknown
  readonly shared: unknown
  readonly created_at: Date
}

/**
 * A message with its sending domain's row as it is now (the domain columns are null when the
 * domain was removed): read at every attempt, so the return path follows the domain's re-check
 * and a removed domain stops at once.
 */
export interface LoadedMessage extends MessageForDelivery {
  readonly domain_id: string | null
  readonly dkim_selector: string | null
  readonly return_path_verified_at: Date | null
}

/**
 * Where an attempt went: the remote host whose reply decided it (the MX name, or the smarthost),
 * recorded with the attempt (delivery_attempts). Absent when no SMTP session decided the outcome
 * (a delivery-time check, no route, a simulated attempt).
 */
interface Attempted {
  readonly host?: string | undefined
  /** The TLS of the session that decided it, and the MTA-STS mode that applied (delivery_attempts' tls_* columns). */
  readonly tls?: AttemptTls | undefined
}

/** What an attempt records of its session's TLS (src/mta/tls-session.ts) and the MTA-STS mode it was made under. */
export interface AttemptTls {
  readonly version: string | null
  readonly verified: boolean
  /** RFC 8460 result type when TLS fell short (the TLS-RPT report counts it); null when it verified. */
  readonly failure: string | null
  readonly mtaSts: "enforce" | "testing" | null
}

/** What the classification of an attempt decided, ready to be written. */
export type Outcome = Attempted & (
  | { readonly _tag: "sent"; readonly code: number; readonly status: string; readonly reply: string }
  | {
    readonly _tag: "bounced"
    readonly code: number | null
    readonly status: string
    readonly category: "hard" | "soft"
    readonly reply: string
    readonly suppress: boolean
  }
  | { readonly _tag: "deferred"; readonly code: number | null; readonly status: string; readonly reply: string; readonly retryAt: Date }
  | { readonly _tag: "failed"; readonly code: number | null; readonly status: string; readonly reply: string }
)

/** One attempt's outcome, ready to be written by `completeMany`. */
export interface Completion {
  /** The lease owner: only its lease lets the row be written. */
  readonly owner: string
  readonly d: ClaimedDelivery
  readonly m: MessageForDelivery
  readonly outcome: Outcome
  readonly now: Date
  /**
   * The subject as the contact's render made it (campaign and sequence mail, whose stored subject
   * is the template's): recorded with the outcome, so the audit and the events show what was sent.
   */
  readonly renderedSubject?: string | undefined
}

/** The subject the recipient got: the render's, else the stored one. */
export const subjectSent = (c: Pick<Completion, "m" | "renderedSubject">): string => c.renderedSubject ?? c.m.subject

/** What the outcome events of `m`'s delivery to `recipient` need, by the message's origin. */
const factsOf = (m: MessageForDelivery, recipient: string, subject: string): DeliveryFacts => {
  const common = { recipient, subject, message_id: m.id }
  switch (m.origin) {
    case "transactional":
      return { ...common, origin: "transactional", request_id: m.request_id }
    case "campaign":
      return { ...common, origin: "campaign", campaign_id: m.origin_ref ?? "" }
    case "sequence":
      return { ...common, origin: "sequence", sequence_id: m.origin_ref ?? "" }
    default:
      return { ...common, origin: m.origin }
  }
}

/**
 * The event an outcome emits (its outbox row), if any: a deferral emits none, and what the others
 * emit depends on the message's origin (src/events/outcomes.ts).
 */
const eventOf = (c: Completion): { readonly event: string; readonly payload: Record<string, unknown> } | null => {
  const { d, m, outcome } = c
  if (outcome._tag === "deferred") return null
  const facts = factsOf(m, d.recipient, subjectSent(c))
  const event = outcomeEvent(facts, outcome._tag === "bounced"
    ? { _tag: "bounced", status: outcome.status, category: outcome.category, diagnostic: outcome.reply }
    : outcome._tag === "failed" ? { _tag: "failed", error: outcome.reply } : { _tag: "sent" })
  return event === null ? null : outboxRow(event)
}

/** A completion as one row of the statement's JSON recordset (times as ISO strings). */
const rowOf = (c: Completion) => {
  const { d, outcome, now } = c
  const emitted = eventOf(c)
  return {
    id: d.id,
    owner: c.owner,
    state: outcome._tag,
    code: outcome.code,
    status: outcome.status,
    reply: outcome.reply.slice(0, 1000),
    host: outcome.host?.slice(0, 255) ?? null,
    rendered_subject: c.renderedSubject ?? null,
    tls_version: outcome.tls?.version ?? null,
    tls_verified: outcome.tls?.verified ?? null,
    tls_failure: outcome.tls?.failure ?? null,
    mta_sts_mode: outcome.tls?.mtaSts ?? null,
    next_attempt_at: (outcome._tag === "deferred" ? outcome.retryAt : now).toISOString(),
    completed_at: outcome._tag === "deferred" ? null : now.toISOString(),
    updated_at: now.toISOString(),
    event_id: emitted === null ? null : newId("evt"),
    account_id: d.account_id,
    key_id: d.key_id,
    event: emitted?.event ?? null,
    payload: emitted?.payload ?? null
  }
}

export class DeliveryQueue extends Effect.Service<DeliveryQueue>()("herald/DeliveryQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Bulk's reactions to outcomes (ports): captured here so the queue's methods need nothing more.
    const suppressionHooks = yield* SuppressionHooks
    const deliveryHooks = yield* DeliveryHooks

    /**
     * Claims up to `limit` due deliveries of one lane (channel) for `owner`, leased until
     * `leaseUntil`, each with its delivery-time checks read in the same statement (delivery-checks.ts).
     */
    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number, skipDomains: ReadonlyArray<string>, lane: Channel) =>
      sql<ClaimedDelivery>`
        UPDATE deliveries d SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}, claims_since_outcome = d.claims_since_outcome + 1,
          held_at = NULL
        WHERE d.id = ANY(ARRAY(
          SELECT id FROM deliveries
          WHERE channel = ${lane} AND state IN ('queued', 'deferred') AND next_attempt_at <= ${now}
            ${skipDomains.length === 0 ? sql`` : sql`AND recipient_domain NOT IN ${sql.in(skipDomains)}`}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ))
        RETURNING d.id, d.message_id, d.account_id, d.key_id, d.recipient, d.recipient_domain, d.attempts, d.claims_since_outcome, d.created_at, d.channel,
          (SELECT coalesce(m.content_bytes, pg_column_size(m.content)) FROM messages m WHERE m.id = d.message_id) AS content_bytes,
          ${checksColumn(sql)}`

    /** Keeps the lease of work still in hand (a fiber calls this well before the lease ends). */
    const extend = (owner: string, ids: ReadonlyArray<string>, leaseUntil: Date) =>
      ids.length === 0
        ? Effect.void
        : sql`UPDATE deliveries SET next_attempt_at = ${leaseUntil}
            WHERE lease_owner = ${owner} AND id IN ${sql.in(ids)} AND state IN ('queued', 'deferred')`.pipe(Effect.asVoid)

    /**
     * Gives unattempted work back (at shutdown, or refused by a paused or busy destination): due
     * again at once, for any replica, and its claim taken back — it did not end without an outcome.
     */
    const release = (owner: string, ids: ReadonlyArray<string>, now: Date) =>
      ids.length === 0
        ? Effect.void
        : sql`UPDATE deliveries SET next_attempt_at = ${now}, lease_owner = NULL, claims_since_outcome = greatest(claims_since_outcome - 1, 0)
            WHERE lease_owner = ${owner} AND id IN ${sql.in(ids)} AND state IN ('queued', 'deferred')`.pipe(Effect.asVoid)

    /**
     * Holds claimed work whose account's sending (or whose campaign) is paused: not attempted, its
     * claim taken back, marked held (so lifting the pause wakes it) and due again at `recheckAt` —
     * or at once when the pause was lifted since the claim read it (the lift's wake-up skipped the
     * leased row).
     */
    /** Whether the held row's campaign (if any) is paused now, or its sequence step held: a campaign's pause holds like an account's. */
    const campaignPaused = sql`(EXISTS (SELECT 1 FROM messages m JOIN campaigns c ON c.id = m.campaign_id
      WHERE m.id = d.message_id AND c.status = 'paused') OR ${sequenceRenderHeld(sql)})`

    const hold = (owners: ReadonlyArray<string>, ids: ReadonlyArray<string>, now: Date, recheckAt: Date) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<boolean>)
        : Effect.map(
          sql<{ id: string }>`UPDATE deliveries d SET lease_owner = NULL, claims_since_outcome = greatest(d.claims_since_outcome - 1, 0),
              held_at = CASE WHEN a.sending_paused_at IS NULL AND NOT ${campaignPaused} THEN NULL ELSE ${now}::timestamptz END,
              next_attempt_at = CASE WHEN a.sending_paused_at IS NULL AND NOT ${campaignPaused} THEN ${now}::timestamptz ELSE ${recheckAt}::timestamptz END
            FROM accounts a
            WHERE a.id = d.account_id AND d.id IN ${sql.in(ids)} AND d.lease_owner IN ${sql.in(owners)} AND d.state IN ('queued', 'deferred')
            RETURNING d.id`,
          (rows) => {
            const held = new Set(rows.map((r) => r.id))
            return ids.map((id) => held.has(id))
          }
        )

    /**
     * Messages with their sending domain, one statement for any number of attempts (see
     * LoadedMessage). The stored message (both parts, attachments included) only of `withContent`:
     * a message already in the MTA's hands is not read again for its next recipient.
     */
    const load = (ids: ReadonlyArray<string>, withContent: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<LoadedMessage>)
        : sql<LoadedMessage>`
            SELECT m.id, m.request_id, m.from_domain, m.subject, m.origin, m.created_at,
                   coalesce(m.content->>'campaign_id', m.content->>'sequence_id') AS origin_ref,
                   CASE WHEN m.id = ANY(${withContent}) THEN m.content END AS content,
                   CASE WHEN m.id = ANY(${withContent}) THEN c.content END AS shared,
                   s.id AS domain_id, s.dkim_selector, s.return_path_verified_at
            FROM messages m LEFT JOIN message_contents c ON c.id = m.content_id
              LEFT JOIN domains s ON s.account_id = m.account_id AND s.domain = m.from_domain
            WHERE m.id IN ${sql.in(ids)}`

    const dkimKey = (domainId: string) =>
      Effect.map(
        sql<{ dkim_private_key: string }>`SELECT dkim_private_key FROM domains WHERE id = ${domainId}`,
        (rows) => rows[0]?.dkim_private_key
      )

    /**
     * Writes the outcomes of many attempts, each with its event, its attempt record
     * (delivery_attempts: the history a message lookup shows) and, for a bounce that asks for
     * it, the address's suppression, in one transaction: the outbox rule holds for every row, and
     * a busy MTA pays one round trip per group of attempts instead of four per attempt. Only the
     * lease owner may write: a row whose lease was lost to another replica is left alone, and so
     * are its event and suppression. Answers, per item, whether its row was written.
     */
    const completeMany = (items: ReadonlyArray<Completion>) =>
      Effect.gen(function*() {
        if (items.length === 0) return [] as ReadonlyArray<boolean>
        const rows = items.map(rowOf)
        const write = sql<{ id: string }>`
          WITH o AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS o(
              id text, owner text, state text, code int, status text, reply text, next_attempt_at timestamptz, completed_at timestamptz,
              updated_at timestamptz, event_id text, account_id text, key_id text, event text, payload jsonb, host text,
              rendered_subject text, tls_version text, tls_verified boolean, tls_failure text, mta_sts_mode text)
          ), done AS (
            UPDATE deliveries d SET
              state = o.state, attempts = d.attempts + 1, claims_since_outcome = 0, last_code = o.code, last_status = o.status, last_reply = o.reply,
              updated_at = o.updated_at, next_attempt_at = o.next_attempt_at, lease_owner = NULL, completed_at = o.completed_at,
              rendered_subject = coalesce(o.rendered_subject, d.rendered_subject)
            FROM o
            WHERE d.id IN ${sql.in(rows.map((r) => r.id))} AND d.id = o.id
              AND d.lease_owner = o.owner AND d.state IN ('queued', 'deferred')
            RETURNING d.id
          ), emitted AS (
            INSERT INTO events (id, account_id, key_id, event, payload, created_at)
            SELECT o.event_id, o.account_id, o.key_id, o.event, o.payload, o.updated_at FROM o JOIN done ON done.id = o.id
            WHERE o.event IS NOT NULL
          ), attempted AS (
            INSERT INTO delivery_attempts (delivery_id, account_id, at, host, code, status, reply, outcome, tls_version, tls_verified, tls_failure, mta_sts_mode)
            SELECT o.id, o.account_id, o.updated_at, o.host, o.code, o.status, o.reply, o.state, o.tls_version, o.tls_verified, o.tls_failure, o.mta_sts_mode
            FROM o JOIN done ON done.id = o.id
          )
          SELECT id FROM done`
        // A simulator address is never put on a suppression list, whatever its outcome asks.
        const suppressing = items.filter((i) => i.outcome._tag === "bounced" && i.outcome.suppress && !isSimulatorAddress(i.d.recipient))
        const written = suppressing.length === 0
          ? yield* write
          : yield* sql.withTransaction(Effect.gen(function*() {
            const done = yield* write
            const ids = new Set(done.map((r) => r.id))
            for (const { d, outcome, now } of suppressing) {
              // System mail has no account whose list the address could go on (its bounce is logged).
              if (ids.has(d.id) && d.account_id !== null) {
                yield* suppressAutomatically(d.account_id, d.recipient, "bounce", `smtp ${outcome.status}`, now).pipe(
                  Effect.provideService(SqlClient.SqlClient, sql),
                  Effect.provideService(SuppressionHooks, suppressionHooks)
                )
                // The same fact as a suppressing DSN (inbound/processor/bounces.ts): the address's
                // history, and its account's active contacts `bounced`.
                const detail = [outcome.status, outcome.reply].filter((part) => part !== null && part !== "").join(" ").slice(0, 1000)
                yield* deliveryHooks.addressBouncedAndSuppressed({ accountId: d.account_id, email: d.recipient, at: now, messageId: d.message_id, detail })
              }
            }
            return done
          }))
        const ids = new Set(written.map((r) => r.id))
        return items.map((i) => ids.has(i.d.id))
      })

    // deliveryHooks: the simulator's complaint (simulator.ts) writes its fact in the outcome's transaction too.
    return { claim, extend, release, hold, load, dkimKey, completeMany, deliveryHooks } as const
  })
}) {}
