/** The SessionLookup port of the http kit (src/http/session-lookup.ts) over the console's sessions. */
import { Effect, Layer, Option } from "effect"
import { SessionLookup } from "../../http/session-lookup.ts"
import { ConsoleSessions } from "./sessions.ts"

export const SessionLookupLive = Layer.effect(
  SessionLookup,
  Effect.map(ConsoleSessions, (sessions) => ({
    authenticate: (sessionId: string) =>
      Effect.map(sessions.find(sessionId), Option.map((session) => ({
        principal: session.keyActive
          ? Option.some({ keyId: session.activeKeyId, accountId: session.accountId, isAdmin: session.isAdmin })
          : Option.none(),
        csrfToken: session.csrfToken
      })))
  }))
)
