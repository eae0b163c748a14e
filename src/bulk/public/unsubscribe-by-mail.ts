/**
 * What a mail to the unsubscribe address changes (the mailto of every bulk message's
 * List-Unsubscribe): the unsubscribe its token names, through `unsubscribeAddress` like the
 * one-click POST and the page's button (DESIGN "Unsubscribe and suppression are one fact"). A mail
 * from outside acts only on what it can prove: the first candidate of its Subject that opens as an
 * unsubscribe token, whoever sent it — the token is the proof, as it is for the one-click POST.
 * Nothing else the message says (its From, its body) is acted on. The inbound processor reads the
 * Subject (src/inbound/parse/unsubscribe-request.ts) and calls this through its ReportHooks port
 * (src/bulk/hooks.ts), inside the transaction that marks the mail processed.
 */
import { Effect, Option } from "effect"
import { unsubscribeAddress } from "../contacts/unsubscribe.ts"
import type { makeTokens } from "./tokens.ts"
import { openUnsubscribeToken } from "./unsubscribe-link.ts"

/** The suppression source of an unsubscribe by mail. */
export const MAILTO_SOURCE = "mailto"

/** Applies the unsubscribe the first opening candidate names; false when none opens (nothing changed). */
export const applyUnsubscribeRequest = (tokens: ReturnType<typeof makeTokens>, candidates: ReadonlyArray<string>, now: Date) =>
  Effect.gen(function*() {
    for (const candidate of candidates) {
      const who = openUnsubscribeToken(tokens, candidate, now.getTime())
      if (Option.isNone(who)) continue
      yield* unsubscribeAddress({
        accountId: who.value.accountId,
        email: who.value.email,
        source: MAILTO_SOURCE,
        at: now,
        sentBy: who.value.source
      })
      return true
    }
    return false
  })
