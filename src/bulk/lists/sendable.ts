/**
 * DESIGN "Sendable", written once for every reader of the audience (a list's `sendable_count`, a
 * segment preview's `sendable`, a sequence's enrolment): a contact is sendable on a target when
 * its status is `active`, its address is on no suppression list (its account's or the
 * platform's), its membership in that list is not `unsubscribed`, and, for a list that requires
 * confirmation, that membership is `confirmed`. Each part is an SQL condition over the caller's aliases (the contact `c`, the
 * membership `m` by default), so every statement keeps its own shape and the rule stays one.
 */
import type { SqlClient, Statement } from "@effect/sql"

/** The contact's address is on a suppression list of its account or of the platform. */
export const suppressedContact = (sql: SqlClient.SqlClient, contact = "c"): Statement.Fragment => {
  const c = sql.literal(contact)
  return sql`EXISTS (SELECT 1 FROM suppressions s WHERE s.email = lower(${c}.email) AND (s.account_id = ${c}.account_id OR s.account_id IS NULL))`
}

/** The membership counts on its list: confirmed, or the list requires no confirmation — never `unsubscribed` (issue 30 item 8). */
export const confirmedMembership = (
  sql: SqlClient.SqlClient,
  requireConfirmation: boolean | Statement.Fragment,
  membership = "m"
): Statement.Fragment => {
  const m = sql.literal(membership)
  if (requireConfirmation === false) return sql`${m}.status <> 'unsubscribed'`
  return requireConfirmation === true
    ? sql`${m}.status = 'confirmed'`
    : sql`(${m}.status = 'confirmed' OR (NOT ${requireConfirmation} AND ${m}.status <> 'unsubscribed'))`
}

/** The contact is sendable whatever the target: `active` and not suppressed. */
export const sendableContact = (sql: SqlClient.SqlClient, contact = "c"): Statement.Fragment =>
  sql`(${sql.literal(contact)}.status = 'active' AND NOT ${suppressedContact(sql, contact)})`

/** The member is sendable on its list: a sendable contact and a membership that counts. */
export const sendableMember = (
  sql: SqlClient.SqlClient,
  options: { readonly requireConfirmation: boolean | Statement.Fragment; readonly contact?: string; readonly membership?: string }
): Statement.Fragment =>
  sql`(${sendableContact(sql, options.contact)} AND ${confirmedMembership(sql, options.requireConfirmation, options.membership)})`
