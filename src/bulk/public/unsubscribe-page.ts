/**
 * `{HERALD_BASE_URL}/u/<token>`, the unsubscribe link of every bulk message (unsubscribe-link.ts),
 * public: no key (DESIGN "Public pages and tokens").
 *
 * - `POST` with the form field `List-Unsubscribe=One-Click` (urlencoded or multipart, RFC 8058
 *   §3.1) is the one-click unsubscribe a mail client sends on the person's behalf: it applies the
 *   unsubscribe at once and answers 200 with an empty body — no page, no redirect (RFC 8058 §3.2).
 * - `GET` shows a page with buttons and changes nothing, so a link scanner that opens the link
 *   unsubscribes nobody: "stop mail from <lists>" when the token's campaign was sent to lists, and
 *   always "stop all mail from <sender>" (the account). Each posts the same form plus hidden `page`
 *   and `scope` (`list` or `all`) fields, whose answer is a page saying it is done.
 * - Which (DESIGN "Unsubscribing from one list"): the lists' memberships become `unsubscribed`
 *   (`unsubscribeFromLists`) for the page's list button and for the one-click of a campaign sent to
 *   lists; all mail (`unsubscribeAddress`: the account's suppression) for the other button and for
 *   the one-click of a campaign sent to a segment alone, a sequence step, or a campaign gone.
 *
 * Every unsubscribe goes through `unsubscribeAddress` (DESIGN "Unsubscribe and suppression are one
 * fact"); repeating one changes nothing. A token that does not open — tampered, cut short, minted
 * for another purpose — gets the plain 404 page and changes nothing. The body is read within
 * FORM_MAX_BYTES (a form of two fields), never the general HERALD_HTTP_MAX_BODY_KB.
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SuppressionHooks } from "../../platform/suppressions/hooks.ts"
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { readBodyWithin } from "../../http/body-reader.ts"
import { unsubscribeAddress } from "../contacts/unsubscribe.ts"
import { unsubscribeFromLists } from "../lists/unsubscribe-list.ts"
import { formFields } from "./form-body.ts"
import { invalidLinkPage, publicPage } from "./page.ts"
import { PublicTokens } from "./tokens.ts"
import { openUnsubscribeToken, type Unsubscriber, unsubscribeUrl } from "./unsubscribe-link.ts"

/** The most a one-click or button body may be: `List-Unsubscribe=One-Click&page=1` and a multipart frame around it. */
export const FORM_MAX_BYTES = 4 * 1024

/** The hidden field the page's button adds, so that its answer is a page rather than RFC 8058's empty 200. */
export const PAGE_FIELD = "page"

/** The suppression source of each way in (kept on the suppression and in the engagement history). */
export const UNSUBSCRIBE_SOURCES = { oneClick: "one-click", page: "unsubscribe page", mailto: "mailto" } as const

const ONE_CLICK = { name: "List-Unsubscribe", value: "One-Click" } as const

const notAnUnsubscribe = () =>
  publicPage({
    title: "This is not an unsubscribe request",
    paragraphs: ["The request did not ask to unsubscribe. Nothing was changed."],
    status: 400
  })

/** The sender's name as the person knows it: the account's (the confirmation mail names it too). */
const senderName = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ name: string }>`SELECT name FROM accounts WHERE id = ${accountId}`).pipe(
    Effect.map(([row]) => row?.name ?? "this sender")
  )

/** The hidden field saying which button was pressed: `list` (the campaign's lists) or `all` (all mail from the sender). */
export const SCOPE_FIELD = "scope"

/** The lists (id, name) the token's campaign was sent to, as they still exist; none for a segment alone, a sequence or a campaign gone. */
const listsOfSource = (who: Unsubscriber) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    who.source === undefined || !who.source.startsWith("cp_")
      ? Effect.succeed([] as ReadonlyArray<{ id: string; name: string }>)
      : sql<{ id: string; name: string }>`SELECT l.id, l.name FROM campaigns c JOIN lists l ON l.id = ANY(c.list_ids) AND l.key_id = c.key_id
          WHERE c.id = ${who.source} AND c.account_id = ${who.accountId} ORDER BY l.name, l.id`)

const namesOf = (lists: ReadonlyArray<{ readonly name: string }>) => lists.map((l) => l.name).join(", ")

const button = (action: string, label: string, scope: "list" | "all") =>
  ({ action, label, fields: { [ONE_CLICK.name]: ONE_CLICK.value, [PAGE_FIELD]: "1", [SCOPE_FIELD]: scope } })

const confirmPage = (who: Unsubscriber, sender: string, lists: ReadonlyArray<{ readonly name: string }>, action: string) =>
  publicPage({
    title: "Unsubscribe",
    paragraphs: [
      lists.length === 0 ? `Stop email from ${sender} to ${who.email}?` : `Which email should ${who.email} stop getting?`,
      "Nothing changes until you press a button."
    ],
    buttons: [
      ...(lists.length === 0 ? [] : [button(action, `Stop mail from ${namesOf(lists)}`, "list")]),
      button(action, `Stop all mail from ${sender}`, "all")
    ]
  })

const donePage = (who: Unsubscriber, what: string) =>
  publicPage({
    title: "You are unsubscribed",
    paragraphs: [`${who.email} will get no more ${what}.`]
  })

export const UnsubscribePageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const tokens = yield* PublicTokens
    const config = yield* AppConfig
    // An unsubscribe suppresses the address, which tells the SuppressionHooks (sequences are cancelled).
    const services = yield* Effect.context<SqlClient.SqlClient | SuppressionHooks>()
    const limits = {
      maxBytes: FORM_MAX_BYTES,
      limitName: "the unsubscribe form's limit",
      minBytesPerSecond: config.httpMinUploadBytesPerSecond,
      graceMs: config.httpUploadGraceMs
    }
    /** The path the page's form posts to: same origin (CSP `form-action 'self'`), under the base URL's path. */
    const actionOf = (token: string) => new URL(unsubscribeUrl(config.baseUrl, token)).pathname

    /** Who the route's token unsubscribes, if it opens. */
    const unsubscriber = Effect.gen(function*() {
      const { token } = yield* HttpRouter.params
      const now = yield* Clock.currentTimeMillis
      return token === undefined ? Option.none() : Option.map(openUnsubscribeToken(tokens, token, now), (who) => ({ token, who }))
    })

    yield* router.get(
      "/u/:token",
      Effect.flatMap(unsubscriber, Option.match({
        onNone: () => Effect.succeed(invalidLinkPage()),
        onSome: ({ token, who }) =>
          Effect.zipWith(senderName(who.accountId), listsOfSource(who), (sender, lists) => confirmPage(who, sender, lists, actionOf(token)))
            .pipe(Effect.provide(services))
      }))
    )

    yield* router.post(
      "/u/:token",
      Effect.gen(function*() {
        const found = yield* unsubscriber
        if (Option.isNone(found)) return invalidLinkPage()
        const { who } = found.value
        const request = yield* HttpServerRequest.HttpServerRequest
        const fields = formFields(request.headers["content-type"], yield* readBodyWithin(request, limits))
        if (fields?.get(ONE_CLICK.name) !== ONE_CLICK.value) return notAnUnsubscribe()
        const fromPage = fields.get(PAGE_FIELD) === "1"
        const lists = yield* listsOfSource(who).pipe(Effect.provide(services))
        // The one-click leaves the campaign's lists when it went to lists; the page does what its button says.
        const fromLists = lists.length > 0 && (fromPage ? fields.get(SCOPE_FIELD) === "list" : true)
        const unsubscribe = {
          accountId: who.accountId,
          email: who.email,
          source: fromPage ? UNSUBSCRIBE_SOURCES.page : UNSUBSCRIBE_SOURCES.oneClick,
          sentBy: who.source,
          at: new Date(yield* Clock.currentTimeMillis)
        }
        if (fromLists) yield* unsubscribeFromLists({ ...unsubscribe, listIds: lists.map((l) => l.id) }).pipe(Effect.provide(services))
        else yield* unsubscribeAddress(unsubscribe).pipe(Effect.provide(services))
        if (!fromPage) return HttpServerResponse.empty({ status: 200 })
        const what = fromLists ? `mail from ${namesOf(lists)}` : `of these emails from ${yield* senderName(who.accountId).pipe(Effect.provide(services))}`
        return donePage(who, what)
      })
    )
  }))
