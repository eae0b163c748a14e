/**
 * Sequences that start themselves (issue 30 item 10): a sequence with `trigger: {type:
 * "list_joined", list_id}` enrols a contact when its membership of that list becomes sendable —
 * created `confirmed` (a list without confirmation, or consent held), or moved `pending` →
 * `confirmed` (the confirmation page, a re-add with consent held, confirmation switched off). The
 * membership writers (lists/memberships.ts, lists/confirm.ts, Lists.ts) call `enrollJoined` with
 * the contacts whose membership just became so, INSIDE their transaction: the membership and its
 * enrolment commit or roll back together, so a crash neither loses nor doubles one.
 *
 * The enrolment rules are `enroll`'s (Enroll.ts): only while the sequence is active and has steps;
 * only an active contact whose address is not suppressed; a contact with any subscription to the
 * sequence — running or ended, or one its deleted namesake left (issue 30 item 5) — is not
 * enrolled again (the unique (sequence_id, contact_id) with ON CONFLICT DO NOTHING, which also
 * makes a concurrent `enroll` and a trigger enrol a contact once); each new subscription emits
 * `sequence.subscribed`. No backfill: members already on the list when the trigger is set are not
 * enrolled (`enroll` does that on request).
 *
 * Set-based: one INSERT … SELECT per triggered sequence over the whole batch of contacts (an
 * import's 5,000 rows a statement), and one events INSERT for what it enrolled.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { emitEvents } from "../../events/outbox.ts"
import { SequenceSubscribed } from "../../events/schema.ts"
import { newId } from "../../lib/ids.ts"
import { suppressedContact } from "../lists/sendable.ts"
import type { ListUserCheck } from "../resource-users.ts"

/** The only trigger type: a contact's membership of the list becomes sendable. */
export const LIST_JOINED = "list_joined" as const

/** SQL condition: the list aliased `list` triggers an active sequence (the membership calls that count in the rate window). */
export const triggersActiveSequence = (sql: SqlClient.SqlClient, list = "l"): Statement.Fragment =>
  sql`EXISTS (SELECT 1 FROM sequences q WHERE q.trigger_list_id = ${sql.literal(list)}.id AND q.status = 'active')`

/**
 * Enrols `contactIds` (their membership of `listId` just became sendable) into every active
 * sequence the list triggers, in the caller's transaction; answers how many subscriptions it made.
 */
export const enrollJoined = (listId: string, contactIds: ReadonlyArray<string>, at: Date) =>
  Effect.gen(function*() {
    if (contactIds.length === 0) return 0
    const sql = yield* SqlClient.SqlClient
    // A sequence without steps has nothing to send: `enroll` refuses it, a trigger passes it by.
    const sequences = yield* sql<{ id: string; account_id: string; key_id: string; offset_seconds: number }>`
      SELECT q.id, q.account_id, q.key_id, f.offset_seconds FROM sequences q
      CROSS JOIN LATERAL (SELECT offset_seconds FROM sequence_steps t WHERE t.sequence_id = q.id ORDER BY position LIMIT 1) f
      WHERE q.trigger_list_id = ${listId} AND q.status = 'active'
      ORDER BY q.id`
    let enrolled = 0
    for (const sequence of sequences) {
      const dueAt = new Date(at.getTime() + sequence.offset_seconds * 1000)
      const rows = yield* sql<{ email: string }>`
        INSERT INTO sequence_subscriptions (id, sequence_id, account_id, key_id, contact_id, email, state, last_due_at, next_due_at, enrolled_at, updated_at)
        SELECT n.id, ${sequence.id}, ${sequence.account_id}, ${sequence.key_id}, c.id, c.email, 'active',
          ${at}::timestamptz, ${dueAt}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
        FROM unnest(${contactIds.map(() => newId("ss"))}::text[], ${[...contactIds]}::text[]) AS n(id, contact_id)
        JOIN contacts c ON c.id = n.contact_id AND c.key_id = ${sequence.key_id} AND c.status = 'active'
        WHERE NOT ${suppressedContact(sql)}
          AND NOT EXISTS (SELECT 1 FROM sequence_subscriptions gone
            WHERE gone.sequence_id = ${sequence.id} AND gone.contact_id IS NULL AND lower(gone.email) = lower(c.email))
        ON CONFLICT (sequence_id, contact_id) DO NOTHING
        RETURNING email`
      yield* emitEvents(rows.map((row) => ({
        accountId: sequence.account_id,
        keyId: sequence.key_id,
        event: SequenceSubscribed.make({ email: row.email, campaign_id: sequence.id }),
        at
      })))
      enrolled += rows.length
    }
    return enrolled
  })

/** The sequences whose trigger names the list: it is `in_use` (lists/users.ts), not deleted. */
export const sequencesTriggeredBy: ListUserCheck = (keyId, listId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`SELECT id FROM sequences WHERE key_id = ${keyId} AND trigger_list_id = ${listId} ORDER BY id`,
      (rows) => rows.map((r) => `sequence ${r.id} (trigger)`)
    ))
