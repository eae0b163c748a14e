/**
 * Bulk contacts, owned by the API key that created them (another key's contact is not found),
 * addressed by id or by email (an `@` tells them apart; the address is compared case-insensitively
 * and stored as given). Their `lists` are read from the memberships the lists API writes.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import { containing } from "../../platform/suppressions/suppress.ts"
import { SuppressionHooks } from "../../platform/suppressions/hooks.ts"
import { engagementOf } from "./engagement.ts"
import { bulkMessagesTo } from "../../mta/queue/read-models/recipient-messages.ts"
import { recipientState } from "../../transactional/messages/timeline.ts"
import type { RecipientState } from "../../transactional/messages/Api.ts"
import { unsubscribeAddress } from "./unsubscribe.ts"
import { cancelSubscriptionsOfContact } from "../sequences/cancel-by-address.ts"
import { cleanTags, type ImportRow } from "./import-rows.ts"
import { AppConfig } from "../../config/app-config.ts"
import { withStatementTimeout } from "../../db/statement-timeout.ts"

export interface Owner {
  readonly accountId: string
  readonly keyId: string
}

export type ContactStatus = "active" | "unsubscribed" | "bounced" | "complained"

export interface ContactRecord {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly status: ContactStatus
  readonly tags: ReadonlyArray<string>
  readonly metadata: Readonly<Record<string, unknown>>
  readonly created_at: string
  readonly updated_at: string
  readonly lists: ReadonlyArray<{ readonly list_id: string; readonly status: "pending" | "confirmed" | "unsubscribed" }>
}

/** A contact the API creates has the fields of an imported row (import-rows.ts, which the import workers load without @effect/sql). */
export type NewContact = ImportRow

export interface ContactPatch {
  readonly name?: string | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
  readonly status?: "active" | "unsubscribed" | undefined
}

export interface ContactFilter {
  readonly status?: ContactStatus | undefined
  readonly tag?: string | undefined
  readonly list_id?: string | undefined
  readonly search?: string | undefined
  readonly limit: number
  readonly offset: number
}

/** A bulk message the key sent to a contact, as its page lists it (the message view has the rest). */
export interface ContactMessage {
  readonly id: string
  readonly subject: string
  readonly status: RecipientState
  readonly created_at: string
}

export class ContactNotFound extends Data.TaggedError("ContactNotFound")<{ readonly ref: string }> {}
export class ContactExists extends Data.TaggedError("ContactExists")<{ readonly email: string }> {}
/** `active` asked for an address still on a suppression list (account or platform). */
export class StillSuppressed extends Data.TaggedError("StillSuppressed")<{ readonly email: string; readonly reason: string }> {}

export interface ContactRow {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly status: ContactStatus
  readonly tags: ReadonlyArray<string>
  readonly metadata: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
  readonly lists: ContactRecord["lists"]
}

export const toContactRecord = (row: ContactRow): ContactRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  status: row.status,
  tags: row.tags,
  metadata: row.metadata,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  lists: row.lists
})

/** A contact's columns as `ContactRow` (the table aliased `c`), its `lists` read from the memberships. */
export const contactColumns = (sql: SqlClient.SqlClient) =>
  sql`c.id, c.email, c.name, c.status, c.tags, c.metadata, c.created_at, c.updated_at,
      coalesce((SELECT json_agg(json_build_object('list_id', m.list_id, 'status', m.status) ORDER BY m.created_at, m.list_id)
        FROM list_memberships m WHERE m.contact_id = c.id), '[]'::json) AS lists`

/** Tags as stored: trimmed, without empty ones and repeats, in the order given. */
export { cleanTags }

export class Contacts extends Effect.Service<Contacts>()("herald/Contacts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // An unsubscribing PATCH suppresses the address, which tells the SuppressionHooks (sequences are cancelled).
    const suppressionHooks = yield* SuppressionHooks
    const { queryTimeoutMs } = yield* AppConfig
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const columns = contactColumns(sql)

    const refIs = (ref: string) => ref.includes("@") ? sql`lower(c.email) = ${ref.toLowerCase()}` : sql`c.id = ${ref}`

    const find = (owner: Owner, ref: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<ContactRow>`SELECT ${columns} FROM contacts c WHERE c.key_id = ${owner.keyId} AND ${refIs(ref)}`
        if (rows[0] === undefined) return yield* new ContactNotFound({ ref })
        return rows[0]
      })

    const create = (owner: Owner, input: NewContact) =>
      Effect.gen(function*() {
        const at = yield* now
        const inserted = yield* sql<{ id: string }>`
          INSERT INTO contacts (id, account_id, key_id, email, name, tags, metadata, created_at, updated_at)
          VALUES (${newId("ct")}, ${owner.accountId}, ${owner.keyId}, ${input.email}, ${input.name ?? null},
            ${cleanTags(input.tags ?? [])}, ${JSON.stringify(input.metadata ?? {})}::jsonb, ${at}, ${at})
          ON CONFLICT (key_id, lower(email)) DO NOTHING
          RETURNING id`
        if (inserted[0] === undefined) return yield* new ContactExists({ email: input.email })
        return toContactRecord(yield* find(owner, inserted[0].id))
      })

    const list = (owner: Owner, f: ContactFilter) =>
      Effect.gen(function*() {
        const where = sql.and([
          sql`c.key_id = ${owner.keyId}`,
          ...(f.status === undefined ? [] : [sql`c.status = ${f.status}`]),
          ...(f.tag === undefined ? [] : [sql`c.tags @> ARRAY[${f.tag}]::text[]`]),
          ...(f.list_id === undefined ? [] : [sql`EXISTS (SELECT 1 FROM list_memberships m WHERE m.contact_id = c.id AND m.list_id = ${f.list_id})`]),
          ...(f.search === undefined || f.search === ""
            ? []
            : [sql`(lower(c.email) LIKE ${containing(f.search)} OR lower(coalesce(c.name, '')) LIKE ${containing(f.search)})`])
        ])
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM contacts c WHERE ${where}`
        const rows = yield* sql<ContactRow>`SELECT ${columns} FROM contacts c WHERE ${where}
          ORDER BY c.created_at DESC, c.id LIMIT ${f.limit} OFFSET ${f.offset}`
        return { total: count?.total ?? 0, limit: f.limit, offset: f.offset, items: rows.map(toContactRecord) }
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, {
        param: f.search === undefined || f.search === "" ? undefined : "search",
        message: `Listing the contacts took longer than ${queryTimeoutMs} ms: narrow it with status, tag or list_id`
          + (f.search === undefined || f.search === "" ? "" : ", or a longer search")
      }))

    /** `active` again only when no suppression of the address remains, account or platform. */
    const reactivate = (owner: Owner, current: ContactRow, at: Date) =>
      Effect.gen(function*() {
        if (current.status === "active") return
        const entries = yield* sql<{ reason: string }>`SELECT reason FROM suppressions
          WHERE email = ${current.email.toLowerCase()} AND (account_id = ${owner.accountId} OR account_id IS NULL) LIMIT 1`
        if (entries[0] !== undefined) return yield* new StillSuppressed({ email: current.email, reason: entries[0].reason })
        yield* sql`UPDATE contacts SET status = 'active', updated_at = ${at} WHERE id = ${current.id}`
      })

    const update = (owner: Owner, ref: string, patch: ContactPatch) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* find(owner, ref)
        yield* sql`SELECT 1 FROM contacts WHERE id = ${current.id} FOR UPDATE`
        const at = yield* now
        if (patch.name !== undefined) yield* sql`UPDATE contacts SET name = ${patch.name}, updated_at = ${at} WHERE id = ${current.id}`
        if (patch.tags !== undefined) yield* sql`UPDATE contacts SET tags = ${cleanTags(patch.tags)}, updated_at = ${at} WHERE id = ${current.id}`
        if (patch.metadata !== undefined) {
          yield* sql`UPDATE contacts SET metadata = ${JSON.stringify(patch.metadata)}::jsonb, updated_at = ${at} WHERE id = ${current.id}`
        }
        if (patch.status === "unsubscribed") {
          yield* unsubscribeAddress({ accountId: owner.accountId, email: current.email, source: `api key ${owner.keyId}`, at })
        } else if (patch.status === "active") {
          yield* reactivate(owner, current, at)
        }
        return toContactRecord(yield* find(owner, current.id))
      }))

    const remove = (owner: Owner, ref: string) =>
      Effect.gen(function*() {
        const current = yield* find(owner, ref)
        // Its running sequences end visibly (sequence.cancelled, manual) rather than vanishing with it.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* Effect.provideService(cancelSubscriptionsOfContact(current.id, new Date(yield* Clock.currentTimeMillis)), SqlClient.SqlClient, sql)
          yield* sql`DELETE FROM contacts WHERE id = ${current.id} AND key_id = ${owner.keyId}`
        }))
        return { id: current.id, deleted: true as const }
      })

    /** The history of the key's contact of that address (404 without one). */
    const engagement = (owner: Owner, email: string, limit: number, offset: number) =>
      Effect.gen(function*() {
        const contact = yield* find(owner, email)
        const page = yield* engagementOf(owner.accountId, owner.keyId, contact.email, limit, offset)
        return { email: contact.email, ...page }
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, {
        message: `The address's history took longer than ${queryTimeoutMs} ms to read: ask for an earlier page (a smaller offset)`
      }))

    /** The bulk messages this key sent to the key's contact `ref` (404 without one), newest first. */
    const messages = (owner: Owner, ref: string, limit: number, offset: number) =>
      Effect.gen(function*() {
        const contact = yield* find(owner, ref)
        const page = yield* bulkMessagesTo(owner.keyId, contact.email, limit, offset)
        const items: ReadonlyArray<ContactMessage> = page.rows.map((r) => ({
          id: r.id,
          subject: r.subject,
          // A delivery stopped because the address was suppressed meanwhile says so, as the message view does.
          status: recipientState(r, false),
          created_at: r.created_at.toISOString()
        }))
        return { total: page.total, limit, offset, items }
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, {
        param: "offset",
        message: `The address's messages took longer than ${queryTimeoutMs} ms to read: ask for an earlier page (a smaller offset)`
      }))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      create,
      read: (owner: Owner, ref: string) => Effect.map(find(owner, ref), toContactRecord),
      list,
      update: (owner: Owner, ref: string, patch: ContactPatch) =>
        withSql(update(owner, ref, patch).pipe(Effect.provideService(SuppressionHooks, suppressionHooks))),
      remove,
      engagement: (owner: Owner, email: string, limit: number, offset: number) => withSql(engagement(owner, email, limit, offset)),
      messages: (owner: Owner, ref: string, limit: number, offset: number) => withSql(messages(owner, ref, limit, offset))
    } as const
  })
}) {}
