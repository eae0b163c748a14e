/**
 * Bulk lists (issue 19 "Lists"), owned by the API key that created them (another key's list is
 * not found), their members, the confirmation settings, and the delete of several lists at once.
 * Counts: `contact_count` every member, `pending_count` the members still to confirm,
 * `sendable_count` the members sendable on the list (DESIGN "Sendable", ./sendable.ts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { domainOf, isEmailAddress } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"
import { sendingAllowed } from "../../platform/domains/records.ts"
import { contactsOfAddresses } from "../contacts/by-address.ts"
import { contactColumns, type ContactRecord, type ContactRow, type Owner, toContactRecord } from "../contacts/Contacts.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import { ConfirmationMail, type ConfirmingList, defaultConfirmIntro, defaultConfirmSubject } from "./confirmation-mail.ts"
import { ConfirmationRecentlySent, heldUntil } from "./confirmation-window.ts"
import { enrollJoined } from "../sequences/triggered.ts"
import { addMemberships } from "./memberships.ts"
import { sendableMember } from "./sendable.ts"
import { listUsers } from "./users.ts"
import { withPageDeadline, withStatementTimeout } from "../../db/statement-timeout.ts"

export interface ListRecord {
  readonly id: string
  readonly name: string
  readonly key_id: string
  readonly contact_count: number
  readonly created_at: string
  readonly require_confirmation: 0 | 1
  readonly confirm_from_email: string | null
  readonly confirm_from_name: string | null
  readonly confirm_subject: string | null
  readonly confirm_intro: string | null
  readonly sendable_count: number
  readonly pending_count: number
}

export interface ConfirmationSettings {
  readonly require_confirmation: boolean
  readonly confirm_from_email?: string | null | undefined
  readonly confirm_from_name?: string | null | undefined
  readonly confirm_subject?: string | null | undefined
  readonly confirm_intro?: string | null | undefined
}


export class ListNotFound extends Data.TaggedError("ListNotFound")<{ readonly id: string }> {}
export class MemberNotFound extends Data.TaggedError("MemberNotFound")<{ readonly listId: string; readonly ref: string }> {}
export class ListInUse extends Data.TaggedError("ListInUse")<{ readonly id: string; readonly users: ReadonlyArray<string> }> {}
/** A member reference that is neither a contact of the key nor a valid address. */
export class BadMember extends Data.TaggedError("BadMember")<{ readonly index: number; readonly ref: string; readonly message: string }> {}
/** A resend for a member that is not pending on a list requiring confirmation. */
export class MemberNotPending extends Data.TaggedError("MemberNotPending")<{ readonly listId: string; readonly ref: string }> {}
/** A resend to an address that gets no mail: suppressed, on a blocked domain, or its contact not active. */
export class MemberNotMailable extends Data.TaggedError("MemberNotMailable")<{ readonly email: string }> {}
/** Confirmation settings refused: `param` names the field. */
export class BadConfirmation extends Data.TaggedError("BadConfirmation")<{ readonly param: string; readonly message: string }> {}

interface Row {
  readonly id: string
  readonly name: string
  readonly key_id: string
  readonly created_at: Date
  readonly require_confirmation: boolean
  readonly confirm_from_email: string | null
  readonly confirm_from_name: string | null
  readonly confirm_subject: string | null
  readonly confirm_intro: string | null
  readonly contact_count: number
  readonly pending_count: number
  readonly sendable_count: number
}

const toRecord = (row: Row): ListRecord => ({
  id: row.id,
  name: row.name,
  key_id: row.key_id,
  contact_count: row.contact_count,
  created_at: row.created_at.toISOString(),
  require_confirmation: row.require_confirmation ? 1 : 0,
  confirm_from_email: row.confirm_from_email,
  confirm_from_name: row.confirm_from_name,
  confirm_subject: row.confirm_subject,
  confirm_intro: row.confirm_intro,
  sendable_count: row.sendable_count,
  pending_count: row.pending_count
})

export class Lists extends Effect.Service<Lists>()("herald/Lists", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { domainGraceHours, queryTimeoutMs } = yield* AppConfig
    const confirmationMail = yield* ConfirmationMail
    const signal = yield* QueueSignal
    const engine = yield* RenderEngine
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const columns = sql`l.id, l.name, l.key_id, l.created_at, l.require_confirmation, l.confirm_from_email, l.confirm_from_name,
      l.confirm_subject, l.confirm_intro,
      (SELECT count(*)::integer FROM list_memberships m WHERE m.list_id = l.id) AS contact_count,
      (SELECT count(*)::integer FROM list_memberships m WHERE m.list_id = l.id AND m.status = 'pending') AS pending_count,
      (SELECT count(*)::integer FROM list_memberships m JOIN contacts c ON c.id = m.contact_id
        WHERE m.list_id = l.id AND ${sendableMember(sql, { requireConfirmation: sql`l.require_confirmation` })}) AS sendable_count`

    const find = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT ${columns} FROM lists l WHERE l.key_id = ${owner.keyId} AND l.id = ${id}`
        if (rows[0] === undefined) return yield* new ListNotFound({ id })
        return toRecord(rows[0])
      })

    const create = (owner: Owner, name: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const id = newId("ls")
        yield* sql`INSERT INTO lists (id, account_id, key_id, name, created_at, updated_at)
          VALUES (${id}, ${owner.accountId}, ${owner.keyId}, ${name}, ${at}, ${at})`
        return yield* find(owner, id)
      })

    const list = (owner: Owner, limit: number, offset: number) =>
      Effect.gen(function*() {
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM lists WHERE key_id = ${owner.keyId}`
        const rows = yield* sql<Row>`SELECT ${columns} FROM lists l WHERE l.key_id = ${owner.keyId}
          ORDER BY l.created_at DESC, l.id LIMIT ${limit} OFFSET ${offset}`
        return { total: count?.total ?? 0, limit, offset, items: rows.map(toRecord) }
      }).pipe(withPageDeadline(sql, queryTimeoutMs, "lists"))

    const rename = (owner: Owner, id: string, name: string | undefined) =>
      Effect.gen(function*() {
        yield* find(owner, id)
        if (name !== undefined) yield* sql`UPDATE lists SET name = ${name}, updated_at = ${yield* now} WHERE id = ${id} AND key_id = ${owner.keyId}`
        return yield* find(owner, id)
      })

    const remove = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* find(owner, id)
        const users = yield* listUsers(owner.keyId, id)
        if (users.length > 0) return yield* new ListInUse({ id, users })
        yield* sql`DELETE FROM lists WHERE id = ${id} AND key_id = ${owner.keyId}`
        return { id, deleted: true as const }
      }))

    /**
     * Members by contact id or by address; an address not yet a contact of the key becomes one. All
     * or nothing. On a list requiring confirmation the call counts in the rate windows first
     * (ConfirmationMail.admitCall), and answers how many confirmation mails it queued and how many
     * new pending members the 24 h window held back.
     */
    const addMembers = (owner: Owner, id: string, refs: ReadonlyArray<string>) =>
      Effect.flatMap(now, (at) => Effect.zipRight(confirmationMail.admitCall(owner, [id], false, at), addMembersAt(owner, id, refs, at)))

    const addMembersAt = (owner: Owner, id: string, refs: ReadonlyArray<string>, at: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const target = yield* find(owner, id)
        const emails: Array<string> = []
        const ids: Array<string> = []
        for (const [index, raw] of refs.entries()) {
          const ref = raw.trim()
          if (ref.includes("@")) {
            if (!isEmailAddress(ref)) return yield* new BadMember({ index, ref: raw, message: "must be a valid email address (local@domain) or a contact id" })
            emails.push(ref)
          } else ids.push(ref)
        }
        const known = ids.length === 0 ? [] : yield* sql<{ id: string }>`SELECT id FROM contacts WHERE key_id = ${owner.keyId} AND id = ANY(${ids})`
        const knownIds = new Set(known.map((r) => r.id))
        const unknown = ids.findIndex((ref) => !knownIds.has(ref))
        if (unknown >= 0) return yield* new BadMember({ index: refs.indexOf(ids[unknown]!), ref: ids[unknown]!, message: `No contact ${ids[unknown]}` })
        const created = yield* contactsOfAddresses(owner, emails, at)
        const members = [...new Set([...knownIds, ...created.values()])]
        // Unsubscribed members stay so on a list that needs no confirmation: the answer names them.
        const leftUnsubscribed = target.require_confirmation === 1 || members.length === 0 ? [] : (yield* sql<{ contact_id: string }>`
          SELECT contact_id FROM list_memberships WHERE list_id = ${id} AND contact_id = ANY(${members}) AND status = 'unsubscribed'
          ORDER BY contact_id`).map((r) => r.contact_id)
        const { mailed, quotaCount, withheld } = yield* addMemberships(owner, [{ ...target, require_confirmation: target.require_confirmation === 1 }], members, {
          confirmed: false,
          at
        })
        yield* confirmationMail.charge(owner, quotaCount, at)
        return { list: yield* find(owner, id), mailed, withheld, leftUnsubscribed }
      })).pipe(
        Effect.provideService(ConfirmationMail, confirmationMail),
        // The confirmation mail is committed: the MTA may take it now.
        Effect.tap(({ mailed }) => mailed > 0 ? signal.wake("herald_queue") : Effect.void),
        Effect.map(({ list, mailed, withheld, leftUnsubscribed }) => ({
          ...list,
          confirmations_queued: mailed,
          confirmations_withheld: withheld,
          left_unsubscribed: leftUnsubscribed
        }))
      )

    const memberOf = (owner: Owner, id: string, ref: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: string }>`SELECT c.id FROM contacts c JOIN list_memberships m ON m.contact_id = c.id AND m.list_id = ${id}
          WHERE c.key_id = ${owner.keyId} AND ${ref.includes("@") ? sql`lower(c.email) = ${ref.toLowerCase()}` : sql`c.id = ${ref}`}`
        if (rows[0] === undefined) return yield* new MemberNotFound({ listId: id, ref })
        return rows[0].id
      })

    const removeMember = (owner: Owner, id: string, ref: string) =>
      Effect.gen(function*() {
        yield* find(owner, id)
        const contactId = yield* memberOf(owner, id, ref)
        yield* sql`DELETE FROM list_memberships WHERE list_id = ${id} AND contact_id = ${contactId}`
        return { id: contactId, deleted: true as const }
      })

    const members = (owner: Owner, id: string, f: { readonly status?: "pending" | "confirmed" | "unsubscribed" | undefined; readonly limit: number; readonly offset: number }) =>
      Effect.gen(function*() {
        yield* find(owner, id)
        const where = sql.and([
          sql`m.list_id = ${id}`,
          sql`c.key_id = ${owner.keyId}`,
          ...(f.status === undefined ? [] : [sql`m.status = ${f.status}`])
        ])
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM list_memberships m JOIN contacts c ON c.id = m.contact_id WHERE ${where}`
        const rows = yield* sql<ContactRow & { membership_status: "pending" | "confirmed" | "unsubscribed" }>`
          SELECT ${contactColumns(sql)}, m.status AS membership_status FROM list_memberships m JOIN contacts c ON c.id = m.contact_id
          WHERE ${where} ORDER BY m.created_at DESC, c.id LIMIT ${f.limit} OFFSET ${f.offset}`
        const items: Array<ContactRecord & { membership_status: "pending" | "confirmed" | "unsubscribed" }> = rows.map((row) => ({
          ...toContactRecord(row),
          membership_status: row.membership_status
        }))
        return { total: count?.total ?? 0, limit: f.limit, offset: f.offset, items }
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, {
        param: "offset",
        message: `Listing the list's members took longer than ${queryTimeoutMs} ms: ask for an earlier page or one status`
      }))

    /**
     * POST …/contacts/{contact}/resend: the confirmation mail again, to a pending member of a list
     * requiring confirmation. Within 24 h of the list's last confirmation to the address →
     * ConfirmationRecentlySent, checked before the rate window (a refused resend takes no place
     * in it) and again, authoritatively, by the claim inside the transaction. Counts in the
     * windows like the members call; an address that may not be mailed → MemberNotMailable.
     */
    const resendConfirmation = (owner: Owner, id: string, ref: string) =>
      Effect.gen(function*() {
        const target = yield* find(owner, id)
        const contactId = yield* memberOf(owner, id, ref)
        const [member] = yield* sql<{ status: string; email: string }>`SELECT m.status, c.email FROM list_memberships m
          JOIN contacts c ON c.id = m.contact_id WHERE m.list_id = ${id} AND m.contact_id = ${contactId}`
        if (target.require_confirmation !== 1 || member?.status !== "pending") return yield* new MemberNotPending({ listId: id, ref })
        const at = yield* now
        const slot = { listId: id, address: member.email.toLowerCase() }
        const recentlySent = (nextAt: number | undefined) => new ConfirmationRecentlySent({ ...slot, nextAt: nextAt ?? at.getTime() })
        const held = yield* heldUntil(slot, at)
        if (held !== undefined) return yield* recentlySent(held)
        yield* confirmationMail.admitCall(owner, [id], false, at)
        yield* sql.withTransaction(Effect.gen(function*() {
          const queued = yield* confirmationMail.queue(owner, [{ list: target, contactId }], at)
          if (queued.withheld > 0) return yield* recentlySent(yield* heldUntil(slot, at))
          if (queued.mailed === 0) return yield* new MemberNotMailable({ email: member.email })
          yield* confirmationMail.charge(owner, queued.quotaCount, at)
        }))
        yield* signal.wake("herald_queue")
        return { id: contactId, list_id: id, email: member.email, confirmation_sent_at: at.toISOString() }
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /** A sender whose domain is registered to the account and may send (verified, or within its grace). */
    const senderVerified = (owner: Owner, email: string, at: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ verified_at: Date | null; verification_lost_at: Date | null }>`
          SELECT verified_at, verification_lost_at FROM domains WHERE account_id = ${owner.accountId} AND domain = ${domainOf(email).toLowerCase()}`
        const domain = rows[0]
        return domain !== undefined
          && sendingAllowed({ verifiedAt: domain.verified_at, verificationLostAt: domain.verification_lost_at }, at, domainGraceHours) === "ok"
      })

    /**
     * PUT …/confirmation: every setting replaced. Turning confirmation on leaves existing members
     * confirmed (only new members pend); turning it off confirms the pending ones.
     */
    const configure = (owner: Owner, id: string, settings: ConfirmationSettings) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* find(owner, id)
        const at = yield* now
        const from = settings.confirm_from_email ?? null
        if (settings.require_confirmation) {
          if (from === null) return yield* new BadConfirmation({ param: "confirm_from_email", message: "require_confirmation needs a confirm_from_email" })
          if (!(yield* senderVerified(owner, from, at))) {
            return yield* new BadConfirmation({
              param: "confirm_from_email",
              message: `The domain ${domainOf(from)} of confirm_from_email is not verified for this account`
            })
          }
        }
        const subject = settings.confirm_subject ?? (settings.require_confirmation ? defaultConfirmSubject(current.name) : null)
        const intro = settings.confirm_intro ?? (settings.require_confirmation ? defaultConfirmIntro(current.name) : null)
        // Both are templates of the confirmation mail: refused here, not when the first mail is due.
        const fields = ([["confirm_subject", subject], ["confirm_intro", intro]] as const).flatMap(([param, source]) =>
          source === null ? [] : [{ name: param, mode: "text" as const, source, param }])
        yield* engine.fields(owner.accountId, fields, null)
        yield* sql`UPDATE lists SET require_confirmation = ${settings.require_confirmation}, confirm_from_email = ${from},
          confirm_from_name = ${settings.confirm_from_name ?? null}, confirm_subject = ${subject}, confirm_intro = ${intro}, updated_at = ${at}
          WHERE id = ${id} AND key_id = ${owner.keyId}`
        if (!settings.require_confirmation) {
          const confirmed = yield* sql<{ contact_id: string }>`UPDATE list_memberships SET status = 'confirmed', confirmed_at = ${at}
            WHERE list_id = ${id} AND status = 'pending' RETURNING contact_id`
          // Pending → confirmed: sendable now, so the sequences the list triggers enrol them (issue 30 item 10).
          yield* enrollJoined(id, confirmed.map((row) => row.contact_id), at)
        }
        return yield* find(owner, id)
      }))

    /** POST /v1/bulk/lists/delete: the deletable lists in one transaction, the rest reported. */
    const removeMany = (owner: Owner, ids: ReadonlyArray<string>) =>
      sql.withTransaction(Effect.gen(function*() {
        const unique = [...new Set(ids)]
        const found = unique.length === 0 ? [] : yield* sql<{ id: string; account_id: string; key_id: string }>`
          SELECT id, account_id, key_id FROM lists WHERE id = ANY(${unique}) FOR UPDATE`
        const byId = new Map(found.map((r) => [r.id, r]))
        const notFound: Array<string> = []
        const forbidden: Array<string> = []
        const inUse: Array<string> = []
        const deletable: Array<string> = []
        for (const id of unique) {
          const row = byId.get(id)
          if (row === undefined || row.account_id !== owner.accountId) notFound.push(id)
          else if (row.key_id !== owner.keyId) forbidden.push(id)
          else if ((yield* listUsers(owner.keyId, id)).length > 0) inUse.push(id)
          else deletable.push(id)
        }
        const deleted = deletable.length === 0 ? [] : yield* sql`DELETE FROM lists WHERE key_id = ${owner.keyId} AND id = ANY(${deletable}) RETURNING id`
        return { deleted: deleted.length, not_found: notFound, forbidden, in_use: inUse, requested: ids.length }
      }))

    /** The list's confirmation mail as a new member would get it (its settings or their defaults), with a placeholder link. */
    const previewConfirmation = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const [list] = yield* sql<ConfirmingList>`SELECT id, name, confirm_from_email, confirm_from_name, confirm_subject, confirm_intro
          FROM lists WHERE key_id = ${owner.keyId} AND id = ${id}`.pipe(withStatementTimeout(sql, queryTimeoutMs, {
          message: `Reading the list took longer than ${queryTimeoutMs} ms: try again`
        }))
        if (list === undefined) return yield* new ListNotFound({ id })
        // Rendered after the read's transaction: no pooled connection is held while a render worker runs.
        return yield* confirmationMail.preview(owner, list, yield* now)
      })

    return {
      create,
      read: find,
      previewConfirmation,
      list,
      rename,
      remove,
      addMembers,
      removeMember,
      resendConfirmation,
      members,
      configure,
      removeMany
    } as const
  })
}) {}
