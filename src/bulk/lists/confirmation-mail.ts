/**
 * The confirmation mail of double opt-in (issue 19 "Lists"): one message to each contact that has
 * just become a `pending` member of a list requiring confirmation, queued in the caller's
 * transaction (the lists API's add-members, the contact import's `list_ids`), so the mail is
 * durable before the answer and rolls back with it.
 *
 * The message: from `confirm_from_email` / `confirm_from_name`, subject `confirm_subject`, body
 * `confirm_intro` and the link `{HERALD_BASE_URL}/confirm/<token>` (token: purpose `confirm`,
 * fields [list_id, contact_id], 7 days), rendered by the one engine (src/bulk/render) with the
 * contact's fields and metadata, `list_name` and `confirm_url` as variables. The intro is text: it
 * is rendered in text mode and shown escaped in the html part. Channel `bulk`, origin
 * `confirmation` (no sent/failed event: src/events/outcomes.ts).
 *
 * The send path's rules, with the send path's code: `refuseSender` (account suspended, sending
 * paused, sender domain not verified) refuses the whole call; the mail counts against the monthly
 * quota (`charge`: `reserveQuota` as the last statement of the caller's transaction, so the charge
 * commits or rolls back with the mail; simulator addresses are free); an address on a suppression list (account or platform) or
 * on a blocked domain, and a contact that is not `active`, get no mail and stay `pending`. All the
 * messages of one call are one queue write per sender address (one statement while they fit).
 *
 * Mail that others trigger is bounded (issue 26, finding 5): an address gets at most one of a
 * list's confirmations in 24 h, across delete and re-add (confirmation-window.ts; a member held
 * back stays `pending` with no mail and is counted as `withheld`), and a call that may queue
 * confirmation mail counts once in the key's and the account's per-minute windows (`admitCall`).
 * The fixed frame names the account, the list and the date of the request, whatever the account
 * wrote in its subject and intro, so a recipient who did not ask can tell who did; the page's
 * second button ("I did not ask for this") unsubscribes the address from all the account's mail.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { requestId as currentRequestId } from "../../http/request-context.ts"
import { domainOf } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"
import { quotaCountOf } from "../../lib/simulator.ts"
import { structuredMessages } from "../../mta/queue/StoredMessage.ts"
import { Domains } from "../../platform/domains/Domains.ts"
import { Suppressions } from "../../platform/suppressions/Suppressions.ts"
import { AccountLimits } from "../../platform/usage/AccountLimits.ts"
import { reserveQuota } from "../../platform/usage/Quota.ts"
import { refuseSender } from "../../transactional/accept.ts"
import { type QueuedMessage, writeQueue } from "../../mta/queue/enqueue.ts"
import { SendContext } from "../../transactional/send-context.ts"
import type { Owner } from "../contacts/Contacts.ts"
import { contactScope } from "../render/content.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import type { FieldSource } from "../render/tasks.ts"
import { PublicTokens } from "../public/tokens.ts"
import { triggersActiveSequence } from "../sequences/triggered.ts"
import { claimConfirmations, isClaimed } from "./confirmation-window.ts"

/** How long a confirmation link works (DESIGN "Public pages and tokens"). */
export const CONFIRM_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000

/** The documented defaults of a list requiring confirmation whose subject or intro is not given. */
export const defaultConfirmSubject = (listName: string) => `Please confirm your subscription to ${listName}`
export const defaultConfirmIntro = (listName: string) =>
  `You asked to receive mail from ${listName}. Confirm with the button below; if you did not ask, ignore this message and nothing will be sent.`

/** A list as the confirmation mail needs it. */
export interface ConfirmingList {
  readonly id: string
  readonly name: string
  readonly confirm_from_email: string | null
  readonly confirm_from_name: string | null
  readonly confirm_subject: string | null
  readonly confirm_intro: string | null
}

/**
 * What one call queued: messages, how many of them the quota counts, and how many new pending
 * members got none because their address had this list's confirmation in the last 24 h.
 */
export interface Queued {
  readonly mailed: number
  readonly quotaCount: number
  readonly withheld: number
}
export const NOTHING_QUEUED: Queued = { mailed: 0, quotaCount: 0, withheld: 0 }
export const addQueued = (a: Queued, b: Queued): Queued => ({
  mailed: a.mailed + b.mailed,
  quotaCount: a.quotaCount + b.quotaCount,
  withheld: a.withheld + b.withheld
})

/** A membership that has just been created `pending`. */
export interface NewPending {
  readonly list: ConfirmingList
  readonly contactId: string
}

/**
 * What a preview's link carries in place of a token: the link has the real mail's shape but names
 * no membership (the page answers it as an invalid link), so a preview confirms nothing.
 */
export const PREVIEW_TOKEN = "preview"

/** Whom a preview is rendered for: a new member with no name and no fields. */
const PREVIEW_CONTACT = { email: "new.member@example.com", name: null, metadata: {} }

/** The page of a token: `{HERALD_BASE_URL}/confirm/<token>`. */
export const confirmUrl = (baseUrl: string, token: string) => `${baseUrl.replace(/\/+$/, "")}/confirm/${token}`

/**
 * Who asked, for which list and when, in words the account does not choose (the intro and subject
 * are its own): a recipient who did not ask can tell who did, and where to say so.
 */
const REQUEST_LINE = "This request was made on {{ request_date }} through {{ account_name }} for the list \"{{ list_name }}\". "
  + "If you did not ask for it, open the link and press \"I did not ask for this\": you will get no more mail from {{ account_name }}."

/** The fixed frame around the operator's intro: the intro arrives rendered, as `confirm_intro`. */
const CONFIRM_HTML = [
  "<!doctype html>",
  "<html><body style=\"font-family:system-ui,sans-serif;line-height:1.5\">",
  "<p style=\"white-space:pre-line\">{{ confirm_intro }}</p>",
  "<p><a href=\"{{ confirm_url }}\" style=\"display:inline-block;padding:.5rem 1.25rem;border:1px solid #333;text-decoration:none\">Confirm my subscription</a></p>",
  "<p style=\"font-size:.875rem;color:#555\">If the button does not work, open this address: {{ confirm_url }}</p>",
  `<p style="font-size:.875rem;color:#555">${REQUEST_LINE}</p>`,
  "</body></html>"
].join("\n")
const CONFIRM_TEXT = `{{ confirm_intro }}\n\nConfirm your subscription: {{ confirm_url }}\n\n${REQUEST_LINE}\n`

/** The request's date as the mail states it: `2026-11-28 10:33 UTC`. */
export const requestDate = (at: Date) => `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`

/** A list's subject and intro as the engine reads them (the documented defaults when unset). */
export const confirmSources = (list: ConfirmingList) => ({
  subject: list.confirm_subject ?? defaultConfirmSubject(list.name),
  intro: list.confirm_intro ?? defaultConfirmIntro(list.name)
})

/**
 * A list's confirmation mail as the render worker's fields, in order: the intro first (the frame
 * reads it as `confirm_intro`), then the subject (errors name the list's `confirm_subject`), the
 * text and the html frames (which cannot fail).
 */
const confirmationFields = (list: ConfirmingList): ReadonlyArray<FieldSource> => {
  const { intro, subject } = confirmSources(list)
  return [
    { name: "confirm_intro", mode: "text", source: intro, param: "confirm_intro" },
    { name: "confirm_subject", mode: "text", source: subject, param: "confirm_subject" },
    { name: "confirm_text", mode: "text", source: CONFIRM_TEXT, param: "body_text" },
    { name: "confirm_html", mode: "html", source: CONFIRM_HTML, param: "html" }
  ]
}

interface ContactRow {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly metadata: Record<string, unknown>
  readonly status: string
}

export class ConfirmationMail extends Effect.Service<ConfirmationMail>()("herald/ConfirmationMail", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const engine = yield* RenderEngine
    const tokens = yield* PublicTokens
    const suppressions = yield* Suppressions
    const domains = yield* Domains
    const accountLimits = yield* AccountLimits
    const sendContext = yield* SendContext
    const { baseUrl } = yield* AppConfig

    /**
     * A call that may queue confirmation mail — a members call or an import naming a list of the
     * key that requires confirmation, without the operator's consent (`confirmed`) — counts once
     * in the key's and the account's per-minute windows, like a send (DESIGN "Errors", Wave 3), and
     * over it fails with MailRateLimited. It runs before the call's transaction: a refused call
     * writes nothing, and the window's statement never waits for a second pool connection while a
     * transaction holds one. Counted whether or not the call then mails (re-adding members who are
     * all there already): what it may trigger is what others receive. A call naming a list that
     * triggers an active sequence (issue 30 item 10) may enrol, so it counts the same way, once,
     * as `enroll` does — with consent held too.
     */
    const admitCall = (owner: Owner, listIds: ReadonlyArray<string>, confirmed: boolean, at: Date) =>
      Effect.gen(function*() {
        if (listIds.length === 0) return
        const [counted] = yield* sql`SELECT 1 FROM lists l
          WHERE l.key_id = ${owner.keyId} AND l.id = ANY(${[...new Set(listIds)]})
            AND ((l.require_confirmation AND NOT ${confirmed}) OR ${triggersActiveSequence(sql, "l")}) LIMIT 1`
        if (counted === undefined) return
        yield* sendContext.admit(owner.keyId, owner.accountId, at, undefined)
      }).pipe(Effect.catchTag("AccountMissing", Effect.die))

    /** Who asked and when, as the fixed request line names them. */
    const requestedByOf = (owner: Owner, at: Date) =>
      Effect.map(sql<{ name: string }>`SELECT name FROM accounts WHERE id = ${owner.accountId}`, ([account]) =>
        ({ account_name: account?.name ?? owner.accountId, request_date: requestDate(at) }))

    /**
     * One confirmation mail rendered for `contact` with `url` as its link, in a render worker counted
     * against the account's share: the one place the real mail and its preview are made.
     */
    const render = (
      accountId: string,
      fields: ReadonlyArray<FieldSource>,
      list: ConfirmingList,
      contact: { readonly email: string; readonly name: string | null; readonly metadata: Record<string, unknown> },
      url: string,
      requestedBy: { readonly account_name: string; readonly request_date: string }
    ) =>
      Effect.map(
        engine.fields(accountId, fields, { ...contactScope({ list_name: list.name, ...requestedBy }, contact), confirm_url: url }),
        (values) => ({ subject: values["confirm_subject"]!, text: values["confirm_text"]!, html: values["confirm_html"]! })
      )

    /** `list`'s confirmation mail as a new member would get it, with a link that confirms nothing; queues nothing. */
    const preview = (owner: Owner, list: ConfirmingList, at: Date) =>
      Effect.gen(function*() {
        const requestedBy = yield* requestedByOf(owner, at)
        return yield* render(owner.accountId, confirmationFields(list), list, PREVIEW_CONTACT, confirmUrl(baseUrl, PREVIEW_TOKEN), requestedBy)
      })

    /** The new pending members that may be mailed at all: an `active` contact, not suppressed, not on a blocked domain. */
    const reachableOf = (owner: Owner, pending: ReadonlyArray<NewPending>) =>
      Effect.gen(function*() {
        const ids = [...new Set(pending.map((p) => p.contactId))]
        const contacts = new Map((yield* sql<ContactRow>`
          SELECT id, email, name, metadata, status FROM contacts WHERE key_id = ${owner.keyId} AND id = ANY(${ids})`).map((c) => [c.id, c]))
        const addresses = [...new Set([...contacts.values()].map((c) => c.email.toLowerCase()))]
        const suppressed = yield* suppressions.check(owner.accountId, addresses)
        const domainsOfAddresses = [...new Set(addresses.map(domainOf))]
        const blocked = new Set((yield* sql<{ domain: string }>`
          SELECT domain FROM blocked_domains WHERE domain = ANY(${domainsOfAddresses})`).map((b) => b.domain))
        return pending.flatMap((p) => {
          const contact = contacts.get(p.contactId)
          // A list requiring confirmation always has a sender (configure refuses one without).
          if (contact === undefined || contact.status !== "active" || p.list.confirm_from_email === null) return []
          const address = contact.email.toLowerCase()
          return suppressed.has(address) || blocked.has(domainOf(address)) ? [] : [{ ...p, contact }]
        })
      })

    /**
     * Queues the confirmation mail of `pending` (inside the caller's transaction); answers how
     * many messages were queued, how many of them the quota counts, and how many reachable members
     * the 24 h window held back (they stay pending, unmailed). The caller charges the
     * quota (`charge`) as the last step of its transaction and wakes the queue after its commit.
     */
    const queue = (owner: Owner, pending: ReadonlyArray<NewPending>, at: Date) =>
      Effect.gen(function*() {
        if (pending.length === 0) return NOTHING_QUEUED
        const reachable = yield* reachableOf(owner, pending)
        // At most one confirmation per address and list in 24 h: the others stay pending, unmailed.
        const slotOf = (m: typeof reachable[number]) => ({ listId: m.list.id, address: m.contact.email.toLowerCase() })
        const claimed = yield* claimConfirmations(reachable.map(slotOf), at).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        const mailable = reachable.filter((m) => isClaimed(claimed, slotOf(m)))
        const withheld = reachable.length - mailable.length
        if (mailable.length === 0) return { ...NOTHING_QUEUED, withheld }

        // The send path's refusals, once per sender address of the call.
        const limits = yield* accountLimits.of(owner.accountId, at)
        const bySender = new Map<string, Array<typeof mailable[number]>>()
        for (const m of mailable) {
          const from = m.list.confirm_from_email!
          const group = bySender.get(from)
          if (group === undefined) bySender.set(from, [m])
          else group.push(m)
        }
        for (const [from, group] of bySender) {
          const { state } = yield* domains.sendingState(owner.accountId, domainOf(from), at)
          yield* refuseSender(from, group.map((m) => m.contact.email.toLowerCase()), limits, state)
        }

        const prepared = new Map<string, ReadonlyArray<FieldSource>>()
        const expiresAt = at.getTime() + CONFIRM_TOKEN_TTL_MS
        const requestId = (yield* currentRequestId) || newId("req")
        const requestedBy = yield* requestedByOf(owner, at)

        for (const [from, group] of bySender) {
          const messages: Array<QueuedMessage> = []
          for (const { contact, list } of group) {
            let fields = prepared.get(list.id)
            if (fields === undefined) {
              fields = confirmationFields(list)
              prepared.set(list.id, fields)
            }
            const url = confirmUrl(baseUrl, tokens.mint("confirm", [list.id, contact.id], expiresAt))
            const rendered = yield* render(owner.accountId, fields, list, contact, url, requestedBy)
            const to = contact.name === null || contact.name === "" ? { email: contact.email } : { email: contact.email, name: contact.name }
            const stored = structuredMessages({
              from: list.confirm_from_name === null ? { email: from } : { email: from, name: list.confirm_from_name },
              subject: rendered.subject,
              content: [
                { type: "text/plain" as const, value: rendered.text },
                ...(rendered.html === null ? [] : [{ type: "text/html" as const, value: rendered.html }])
              ],
              personalizations: [{ to: [to] }]
            }, { origin: "confirmation", channel: "bulk" })(0)
            messages.push({
              messageId: newId("msg"),
              personalizationIndex: 0,
              subject: rendered.subject,
              stored,
              recipients: [{ email: contact.email, kind: "to" }]
            })
          }
          yield* writeQueue({ accountId: owner.accountId, keyId: owner.keyId, requestId, fromEmail: from, now: at }, messages)
        }
        // A confirmation to a simulator address is free, as a send to one is (src/lib/simulator.ts).
        return { mailed: mailable.length, quotaCount: quotaCountOf(mailable.map((m) => m.contact.email)), withheld }
      })

    /**
     * Charges the quota for the mail queued in this transaction, as its last statement: the
     * account's usage row stays locked only until the commit (an import's batches are not held
     * under it), and the charge commits or rolls back with the mail. Refused (the send's
     * QuotaExhausted or OverageNotOffered) → the caller's transaction rolls back.
     */
    const charge = (owner: Owner, quotaCount: number, at: Date) =>
      quotaCount === 0
        ? Effect.void
        : Effect.flatMap(accountLimits.of(owner.accountId, at), (limits) => reserveQuota(limits, owner.keyId, quotaCount)).pipe(
          Effect.asVoid,
          Effect.provideService(SqlClient.SqlClient, sql)
        )

    return { admitCall, queue, charge, preview } as const
  })
}) {}
