/**
 * The tracking tokens (DESIGN "Public pages and tokens"), minted with the public tokens' secret
 * (src/bulk/public/tokens.ts) and never expiring. An open token names the delivery and its
 * campaign; a click token names the delivery, the campaign and the link's index in the campaign's
 * link table (`campaign_links`), never the URL itself: a token can only send a browser to a URL
 * the campaign's own content holds, so the click endpoint is no open redirect.
 */
import { Option } from "effect"
import type { makeTokens } from "../public/tokens.ts"

type Tokens = ReturnType<typeof makeTokens>

export interface OpenTarget {
  readonly deliveryId: string
  readonly campaignId: string
}

export interface ClickTarget extends OpenTarget {
  readonly linkIndex: number
}

export const openToken = (tokens: Tokens, t: OpenTarget): string => tokens.mint("open", [t.deliveryId, t.campaignId])

export const clickToken = (tokens: Tokens, t: ClickTarget): string =>
  tokens.mint("click", [t.deliveryId, t.campaignId, String(t.linkIndex)])

/** The delivery an open token names, if it is one of ours. */
export const readOpenToken = (tokens: Tokens, token: string, nowMs: number): Option.Option<OpenTarget> =>
  Option.flatMap(tokens.open("open", token, nowMs), (fields) => {
    const [deliveryId, campaignId] = fields
    if (fields.length !== 2 || deliveryId === undefined || campaignId === undefined) return Option.none()
    return Option.some({ deliveryId, campaignId })
  })

/** The delivery and link a click token names, if it is one of ours. */
export const readClickToken = (tokens: Tokens, token: string, nowMs: number): Option.Option<ClickTarget> =>
  Option.flatMap(tokens.open("click", token, nowMs), (fields) => {
    const [deliveryId, campaignId, index] = fields
    if (fields.length !== 3 || deliveryId === undefined || campaignId === undefined || !/^\d{1,6}$/.test(index ?? "")) {
      return Option.none()
    }
    return Option.some({ deliveryId, campaignId, linkIndex: Number(index) })
  })

/** What `fillTracking` needs for one delivery of a campaign. */
export const recipientTokens = (tokens: Tokens, t: OpenTarget) => ({
  open: openToken(tokens, t),
  click: (linkIndex: number) => clickToken(tokens, { ...t, linkIndex })
})
