/**
 * The unsubscribe link of every bulk message (RFC 2369, RFC 8058): what the campaign and sequence
 * messages carry, and what the `/u/<token>` page and the mailto handler read back.
 *
 *   List-Unsubscribe: <{HERALD_BASE_URL}/u/<token>>, <mailto:unsubscribe@{bounce domain}?subject=<token>>
 *   List-Unsubscribe-Post: List-Unsubscribe=One-Click
 *
 * The token names the account and the address (an unsubscribe acts on the address in the whole
 * account: DESIGN "Unsubscribe and suppression are one fact") and the campaign or sequence the
 * message came from ("" for none), which the campaign's analytics count. It never expires. The
 * mailto carries the token in its subject rather than in the local part: a token is longer than
 * the 64 octets RFC 5321 allows a local part, and mail clients keep a mailto's subject.
 * DKIM signs both headers (src/mta/dkim.ts).
 */
import { Option } from "effect"
import type { makeTokens } from "./tokens.ts"

type Tokens = ReturnType<typeof makeTokens>

/** The local part of the mailto address on the bounce domain; the MX listener takes it. */
export const UNSUBSCRIBE_LOCAL_PART = "unsubscribe"

export interface Unsubscriber {
  readonly accountId: string
  readonly email: string
  /** The campaign (`cp_…`) or sequence (`sq_…`) the message came from, if any. */
  readonly source?: string | undefined
}

export const unsubscribeToken = (tokens: Tokens, who: Unsubscriber): string =>
  tokens.mint("unsubscribe", [who.accountId, who.email, who.source ?? ""])

/** Who `token` unsubscribes, if it is one of ours. */
export const openUnsubscribeToken = (tokens: Tokens, token: string, nowMs: number): Option.Option<Unsubscriber> =>
  Option.flatMap(tokens.open("unsubscribe", token, nowMs), (fields) => {
    const [accountId, email, source] = fields
    if (fields.length !== 3 || accountId === undefined || email === undefined) return Option.none()
    return Option.some({ accountId, email, ...(source === "" ? {} : { source }) })
  })

/** The page a person opens (`{{ unsubscribe_url }}` in content, and the first List-Unsubscribe URI). */
export const unsubscribeUrl = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/+$/, "")}/u/${token}`

/** The two headers of a bulk message to `who`. */
export const unsubscribeHeaders = (
  tokens: Tokens,
  where: { readonly baseUrl: string; readonly bounceDomain: string },
  who: Unsubscriber
): Readonly<Record<"List-Unsubscribe" | "List-Unsubscribe-Post", string>> => {
  const token = unsubscribeToken(tokens, who)
  return {
    "List-Unsubscribe": `<${unsubscribeUrl(where.baseUrl, token)}>, <mailto:${UNSUBSCRIBE_LOCAL_PART}@${where.bounceDomain}?subject=${token}>`,
    "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
  }
}
