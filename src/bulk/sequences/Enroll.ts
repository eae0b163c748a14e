/**
 * POST /v1/bulk/sequences/{id}/enroll: every sendable contact of a list or of a saved segment
 * (DESIGN "Sendable", the one definition in lists/sendable.ts; a segment's rules compiled by
 * segments/rules.ts, as a campaign's audience is) gets a subscription, due at enrolment plus the
 * first step's offset, with one `sequence.subscribed` each in the same transaction. Exactly one of
 * `list_id` and `segment_id`; both take the same path below, only the audience's statement differs.
 *
 * Counts, each contact once, in this order: a contact with an active or paused subscription is
 * `already_in`, one whose subscription ended is `skipped_terminal` (never enrolled again), then
 * one whose address is suppressed is `suppressed`; `total` is the list's (the segment's) active contacts. At most
 * HERALD_ENROLL_CAP new subscriptions per call, in contact id order, so enrolling again continues
 * where the last call stopped (`truncated` says eligible contacts remain).
 *
 * Two enrolments of one sequence at once: a transaction-scoped advisory lock on the sequence
 * orders them (the second counts what the first enrolled as `already_in`), and the unique
 * (sequence_id, contact_id) with ON CONFLICT DO NOTHING would still enrol each contact once.
 *
 * Reads `contacts`, `list_memberships` and `suppressions` as the audience's read model, through
 * the same conditions as segments and the lists' sendable_count. Counts against the per-minute
 * rate limit as the other calls that produce mail do (DESIGN), through the send path's own window
 * read.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import { emitEvent } from "../../events/outbox.ts"
import { SequenceSubscribed } from "../../events/schema.ts"
import { newId } from "../../lib/ids.ts"
import { SendContext } from "../../transactional/send-context.ts"
import { listsOfKey } from "../lists/memberships.ts"
import { confirmedMembership, suppressedContact } from "../lists/sendable.ts"
import { compileRules, type SegmentRules } from "../segments/rules.ts"
import { findSequence, type Owner, SequenceInvalid } from "./records.ts"

export class EnrollListNotFound extends Data.TaggedError("EnrollListNotFound")<{ readonly id: string }> {}
export class EnrollSegmentNotFound extends Data.TaggedError("EnrollSegmentNotFound")<{ readonly id: string }> {}

/** Whom to enrol: exactly one of them (the API's payload, checked here). */
export interface EnrollTarget {
  readonly list_id?: string | undefined
  readonly segment_id?: string | undefined
}

/** The one target given, or the 400 naming what to fix. */
const oneTarget = (target: EnrollTarget) =>
  target.list_id !== undefined && target.segment_id !== undefined
    ? Effect.fail(new SequenceInvalid({ param: "segment_id", message: "Give list_id or segment_id, not both" }))
    : target.list_id !== undefined
    ? Effect.succeed({ kind: "list" as const, id: target.list_id })
    : target.segment_id !== undefined
    ? Effect.succeed({ kind: "segment" as const, id: target.segment_id })
    : Effect.fail(new SequenceInvalid({ param: "list_id", message: "list_id or segment_id is required" }))

export interface EnrollResult {
  readonly enrolled: number
  readonly already_in: number
  readonly skipped_terminal: number
  readonly suppressed: number
  readonly total: number
  readonly truncated: boolean
}

/** Namespace of the per-sequence advisory lock (the second key is the sequence id's hash). */
const ENROLL_LOCK = 7_310_021

export class Enroll extends Effect.Service<Enroll>()("herald/SequenceEnroll", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sendContext = yield* SendContext
    const { enrollCap, queryTimeoutMs } = yield* AppConfig

    /**
     * The target's active contacts of the key, each with its subscription's state, whether its
     * address is suppressed and whether its membership counts (a segment has none: always).
     */
    const audience = (owner: Owner, sequenceId: string, target: { readonly kind: "list" | "segment"; readonly id: string }, at: Date) =>
      Effect.gen(function*() {
        // A subscription left by a deleted contact of the same address counts as this contact's (issue 30 item 5).
        const subscription = sql`LEFT JOIN sequence_subscriptions own ON own.sequence_id = ${sequenceId} AND own.contact_id = c.id
          LEFT JOIN sequence_subscriptions gone ON gone.sequence_id = ${sequenceId} AND gone.contact_id IS NULL AND lower(gone.email) = lower(c.email)
          CROSS JOIN LATERAL (SELECT coalesce(own.state, gone.state) AS state) sub`
        if (target.kind === "list") {
          const [list] = yield* listsOfKey(owner, [target.id])
          if (list === undefined) return yield* new EnrollListNotFound({ id: target.id })
          return sql`
            SELECT c.id, c.email, sub.state AS sub_state,
              ${suppressedContact(sql)} AS suppressed, ${confirmedMembership(sql, list.require_confirmation)} AS confirmed
            FROM list_memberships m JOIN contacts c ON c.id = m.contact_id ${subscription}
            WHERE m.list_id = ${target.id} AND c.status = 'active' AND c.key_id = ${owner.keyId}`
        }
        const [segment] = yield* sql<{ rules: SegmentRules }>`SELECT rules FROM segments WHERE id = ${target.id} AND key_id = ${owner.keyId}`
        if (segment === undefined) return yield* new EnrollSegmentNotFound({ id: target.id })
        return sql`
          SELECT c.id, c.email, sub.state AS sub_state, ${suppressedContact(sql)} AS suppressed, TRUE AS confirmed
          FROM contacts c ${subscription}
          WHERE c.key_id = ${owner.keyId} AND c.status = 'active' AND ${compileRules(sql, { keyId: owner.keyId, now: at }, segment.rules)}`
      })

    const enroll = (owner: Owner, sequenceId: string, given: EnrollTarget) =>
      Effect.gen(function*() {
        // Bad input changes nothing: refused before the call counts in the rate window.
        const target = yield* oneTarget(given)
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* sendContext.admit(owner.keyId, owner.accountId, at, undefined)
        const param = target.kind === "list" ? "list_id" : "segment_id"
        return yield* Effect.gen(function*() {
          const sequence = yield* findSequence(owner, sequenceId)
          const classified = yield* audience(owner, sequenceId, target, at)
          if (sequence.status !== "active") {
            return yield* new SequenceInvalid({ param: "status", message: `Sequence ${sequenceId} is inactive: activate it before enrolling` })
          }
          const [first] = yield* sql<{ offset_seconds: number }>`SELECT offset_seconds FROM sequence_steps
            WHERE sequence_id = ${sequenceId} ORDER BY position LIMIT 1`
          if (first === undefined) return yield* new SequenceInvalid({ param: "steps", message: `Sequence ${sequenceId} has no steps` })
          yield* sql`SELECT pg_advisory_xact_lock(${ENROLL_LOCK}, hashtext(${sequenceId}))`
          const [counts] = yield* sql<Omit<EnrollResult, "enrolled" | "truncated"> & { readonly eligible: number }>`
            WITH members AS (${classified})
            SELECT count(*)::integer AS total,
              count(*) FILTER (WHERE sub_state IN ('active', 'paused'))::integer AS already_in,
              count(*) FILTER (WHERE sub_state IN ('completed', 'cancelled'))::integer AS skipped_terminal,
              count(*) FILTER (WHERE sub_state IS NULL AND suppressed)::integer AS suppressed,
              count(*) FILTER (WHERE sub_state IS NULL AND NOT suppressed AND confirmed)::integer AS eligible
            FROM members`
          const dueAt = new Date(at.getTime() + first.offset_seconds * 1000)
          const chosen = yield* sql<{ id: string; email: string }>`
            WITH members AS (${classified})
            SELECT id, email FROM members WHERE sub_state IS NULL AND NOT suppressed AND confirmed ORDER BY id LIMIT ${enrollCap}`
          const enrolled = chosen.length === 0 ? [] : yield* sql<{ email: string }>`
            INSERT INTO sequence_subscriptions (id, sequence_id, account_id, key_id, contact_id, email, state, last_due_at, next_due_at, enrolled_at, updated_at)
            SELECT n.id, ${sequenceId}, ${owner.accountId}, ${owner.keyId}, n.contact_id, n.email, 'active',
              ${at}::timestamptz, ${dueAt}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
            FROM unnest(${chosen.map(() => newId("ss"))}::text[], ${chosen.map((c) => c.id)}::text[], ${chosen.map((c) => c.email)}::text[])
              AS n(id, contact_id, email)
            ON CONFLICT (sequence_id, contact_id) DO NOTHING
            RETURNING email`
          for (const row of enrolled) {
            yield* emitEvent({ accountId: owner.accountId, keyId: owner.keyId, event: SequenceSubscribed.make({ email: row.email, campaign_id: sequenceId }), at })
          }
          const { eligible, ...rest } = counts!
          return { ...rest, enrolled: enrolled.length, truncated: eligible > enrolled.length } satisfies EnrollResult
        }).pipe(withStatementTimeout(sql, queryTimeoutMs, {
          param,
          message: `Enrolling the ${target.kind} took longer than ${queryTimeoutMs} ms: enrol a smaller ${target.kind}`
            + (target.kind === "segment" ? " (fewer or narrower rules)" : "")
        }))
      }).pipe(Effect.catchTag("AccountMissing", Effect.die))

    return { enroll } as const
  })
}) {}
