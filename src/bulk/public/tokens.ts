/**
 * Tokens of the public pages (DESIGN "Public pages and tokens"): `/confirm/<token>` (double
 * opt-in), `/u/<token>` (unsubscribe), `/o/<token>` and `/c/<token>` (tracking). A token names
 * what it acts on — a few strings, such as a membership's list and contact — and carries an HMAC
 * over its purpose and that payload with a secret the appliance keeps in its database, so any
 * replica can check it and nobody can mint one or point it elsewhere. base64url throughout, so a
 * token is one URL path segment.
 *
 *   token = base64url(JSON [fields, expiry seconds or 0]) "." base64url(HMAC-SHA256[:16])
 *
 * The purpose is inside the MAC and not in the token: a confirmation token is no unsubscribe
 * token. 128 bits of tag are plenty for a MAC that is checked online (RFC 2104 §5). Confirmation
 * tokens expire (7 days); unsubscribe and tracking tokens never do.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Effect, Option } from "effect"
import { applianceSecret } from "../../platform/appliance-secrets.ts"

export type TokenPurpose = "confirm" | "unsubscribe" | "open" | "click"

/** Longer tokens are refused before any work: a page never decodes or MACs an unbounded string. */
export const MAX_TOKEN_LENGTH = 512
const TAG_BYTES = 16
const TOKEN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** Mints and opens tokens with one secret (the service below reads it from the database). */
export const makeTokens = (secret: string) => {
  const tag = (purpose: TokenPurpose, payload: string) =>
    createHmac("sha256", secret).update(`${purpose}.${payload}`).digest().subarray(0, TAG_BYTES)

  /** A token for `fields`, valid until `expiresAtMs` (none: for ever). */
  const mint = (purpose: TokenPurpose, fields: ReadonlyArray<string>, expiresAtMs?: number): string => {
    const expiry = expiresAtMs === undefined ? 0 : Math.ceil(expiresAtMs / 1000)
    const payload = Buffer.from(JSON.stringify([fields, expiry])).toString("base64url")
    return `${payload}.${tag(purpose, payload).toString("base64url")}`
  }

  /** The fields `token` names, when it is whole, was minted for `purpose` and has not expired at `nowMs`. */
  const open = (purpose: TokenPurpose, token: string, nowMs: number): Option.Option<ReadonlyArray<string>> => {
    if (token.length > MAX_TOKEN_LENGTH || !TOKEN.test(token)) return Option.none()
    const [payload, given] = token.split(".") as [string, string]
    // Compared as text, not as decoded bytes: the last base64url character of 16 bytes carries 4
    // bits the decoder ignores, so another spelling of the same tag would otherwise pass.
    const expected = Buffer.from(tag(purpose, payload).toString("base64url"))
    const mac = Buffer.from(given)
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return Option.none()
    let decoded: unknown
    try {
      decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    } catch {
      return Option.none()
    }
    if (!Array.isArray(decoded) || decoded.length !== 2) return Option.none()
    const [fields, expiry] = decoded as [unknown, unknown]
    if (!Array.isArray(fields) || !fields.every((f): f is string => typeof f === "string")) return Option.none()
    if (typeof expiry !== "number" || (expiry !== 0 && expiry * 1000 <= nowMs)) return Option.none()
    return Option.some(fields)
  }

  return { mint, open } as const
}

export class PublicTokens extends Effect.Service<PublicTokens>()("herald/PublicTokens", {
  effect: Effect.map(applianceSecret("public_token_secret"), makeTokens)
}) {}
