/**
 * `{HERALD_BASE_URL}/confirm/<token>`, the double opt-in page (DESIGN "Public pages and tokens"):
 * no key. A GET shows the list's name and one button (a form posting to the same path) and never
 * confirms: link scanners open links. The button's POST confirms the membership the token names
 * (src/bulk/lists/confirm.ts) and shows the confirmed page, the same on every later press. A bad,
 * tampered or expired token, or a membership, list or contact that is gone, gets the plain 404
 * page and changes nothing. The request body of the POST is never read.
 */
import { HttpApiBuilder, HttpRouter } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { confirmMembership, type MembershipRef, membershipState, type MembershipState } from "../lists/confirm.ts"
import { invalidLinkPage, publicPage } from "./page.ts"
import { PublicTokens } from "./tokens.ts"

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

const pageOf = (state: MembershipState, action: string) => {
  switch (state._tag) {
    case "gone":
      return invalidLinkPage()
    case "confirmed":
      return confirmedPage(state.listName)
    case "pending":
      return publicPage({
        title: "Confirm your subscription",
        paragraphs: [`Please confirm that you want to receive mail from ${state.listName}.`],
        button: { action, label: "Confirm subscription" }
      })
  }
}

export const ConfirmPageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const tokens = yield* PublicTokens
    const sql = yield* SqlClient.SqlClient
    const signal = yield* QueueSignal

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
        const { changed, state } = yield* confirmMembership(ref.value, new Date(now))
        if (changed) yield* signal.wake("herald_events")
        return state._tag === "gone" ? invalidLinkPage() : confirmedPage(state.listName)
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    )
  }))
