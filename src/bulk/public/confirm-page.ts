/**
 * `{HERALD_BASE_URL}/confirm/<token>`, the double opt-in page (DESIGN "Public pages and tokens"):
 * no key. A GET shows the list's and the account's names and two buttons (forms posting to the
 * same path) and changes nothing: link scanners open links. "Confirm subscription" confirms the
 * membership the token names (src/bulk/lists/confirm.ts) and shows the confirmed page, the same on
 * every later press. "I did not ask for this" (form field `choice=not-me`; issue 26, finding 5)
 * unsubscribes the address from all the account's mail (source `not-me`). A POST without that
 * field confirms, as the single button of earlier mails did. A bad, tampered or expired token, or
 * a membership, list or contact that is gone, gets the plain 404 page and changes nothing. The
 * body is read within FORM_MAX_BYTES, and only for a token that opens.
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SuppressionHooks } from "../../platform/suppressions/hooks.ts"
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { readBodyWithin } from "../../http/body-reader.ts"
import { confirmMembership, type MembershipRef, membershipState, type MembershipState, refuseMembership } from "../lists/confirm.ts"
import { formFields } from "./form-body.ts"
import { invalidLinkPage, publicPage } from "./page.ts"
import { PublicTokens } from "./tokens.ts"
import { FORM_MAX_BYTES } from "./unsubscribe-page.ts"

/** The form field that tells the two buttons apart, and the value of "I did not ask for this". */
export const CHOICE_FIELD = "choice"
export const NOT_ME = "not-me"

/** The membership a confirmation token names, if the token is whole, ours and not expired. */
const openConfirmToken = (tokens: PublicTokens, token: string, nowMs: number): Option.Option<MembershipRef> =>
  Option.flatMap(tokens.open("confirm", token, nowMs), (fields) => {
    const [listId, contactId] = fields
    return fields.length === 2 && listId !== undefined && contactId !== undefined ? Option.some({ listId, contactId }) : Option.none()
  })

const confirmedPage = (listName: string) =>
  publicPage({
    title: "Subscription confirmed",
    paragraphs: [`Thank you: your subscription to ${listName} is confirmed.`]
  })

const refusedPage = (accountName: string) =>
  publicPage({
    title: "You will get no more mail from this sender",
    paragraphs: [`Thank you for telling us. This address will get no more mail from ${accountName}, including confirmation requests.`]
  })

const pageOf = (state: MembershipState, action: string) => {
  switch (state._tag) {
    case "gone":
      return invalidLinkPage()
    case "confirmed":
      return confirmedPage(state.listName)
    case "pending":
      return publicPage({
        title: "Confirm your subscription",
        paragraphs: [
          `Please confirm that you want to receive mail from ${state.listName}.`,
          `${state.accountName} asked to add this address to the list "${state.listName}". If you did not ask for this, say so: `
          + `you will get no more mail from ${state.accountName}.`
        ],
        button: { action, label: "Confirm subscription", fields: { [CHOICE_FIELD]: "confirm" } },
        buttons: [{ action, label: "I did not ask for this", fields: { [CHOICE_FIELD]: NOT_ME } }]
      })
  }
}

export const ConfirmPageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const tokens = yield* PublicTokens
    const sql = yield* SqlClient.SqlClient
    // A "not me" answer unsubscribes, which suppresses the address (its hooks cancel sequences).
    const suppressionHooks = yield* SuppressionHooks
    const signal = yield* QueueSignal
    const config = yield* AppConfig
    const limits = {
      maxBytes: FORM_MAX_BYTES,
      limitName: "the confirmation form's limit",
      minBytesPerSecond: config.httpMinUploadBytesPerSecond,
      graceMs: config.httpUploadGraceMs
    }

    /** The token of the path and the membership it names; none for anything that is not a valid token. */
    const membership = Effect.gen(function*() {
      const token = (yield* HttpRouter.params)["*"]
      const now = yield* Clock.currentTimeMillis
      return { token: token ?? "", ref: token === undefined ? Option.none() : openConfirmToken(tokens, token, now), now }
    })

    // A wildcard, not `:token`: the router refuses a path parameter over 100 characters, and a
    // token is longer. Anything that is not one token (a slash in it, say) fails to open: 404.
    yield* router.get(
      "/confirm/*",
      Effect.gen(function*() {
        const { ref, token } = yield* membership
        if (Option.isNone(ref)) return invalidLinkPage()
        const state = yield* membershipState(ref.value)
        // The form posts to this very path (a relative action would break on a trailing slash).
        return pageOf(state, `/confirm/${token}`)
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    )

    yield* router.post(
      "/confirm/*",
      Effect.gen(function*() {
        const { now, ref } = yield* membership
        if (Option.isNone(ref)) return invalidLinkPage()
        const request = yield* HttpServerRequest.HttpServerRequest
        const fields = formFields(request.headers["content-type"], yield* readBodyWithin(request, limits))
        if (fields?.get(CHOICE_FIELD) === NOT_ME) {
          const refused = yield* refuseMembership(ref.value, new Date(now))
          if (refused?.changed === true) yield* signal.wake("herald_events")
          return refused === undefined ? invalidLinkPage() : refusedPage(refused.accountName)
        }
        const { changed, state } = yield* confirmMembership(ref.value, new Date(now))
        if (changed) yield* signal.wake("herald_events")
        return state._tag === "gone" ? invalidLinkPage() : confirmedPage(state.listName)
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(SuppressionHooks, suppressionHooks))
    )
  }))
