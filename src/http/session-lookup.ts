/**
 * What authentication needs of the console's sessions: who a session cookie is. A port, like
 * KeyLookup (key-lookup.ts): the kit imports no area; the accounts area implements it
 * (src/platform/accounts/session-lookup.ts, over ConsoleSessions) and src/appliance.ts wires it.
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { Principal } from "./key-lookup.ts"

/** The cookie that carries a console session's id (HttpOnly, SameSite=Strict: src/api/console/). */
export const SESSION_COOKIE = "herald_session"

/** The header a cookie-authenticated request other than GET or HEAD must carry: the session's CSRF token. */
export const CSRF_HEADER = "x-herald-csrf"

/** A live session acting as its active key, with the token its unsafe requests must echo. */
export interface SessionPrincipal {
  /** The session's active key; none when that key was revoked since (the console must switch). */
  readonly principal: Option.Option<Principal>
  readonly csrfToken: string
}

export class SessionLookup extends Context.Tag("herald/SessionLookup")<SessionLookup, {
  /** The live session `sessionId` names (none: unknown, signed out, idle too long, or suspended). */
  readonly authenticate: (sessionId: string) => Effect.Effect<Option.Option<SessionPrincipal>, SqlError.SqlError>
}>() {}
