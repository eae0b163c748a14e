/**
 * What authentication needs of the API keys: who a token is. A port: the auth middleware
 * (auth.ts) is kit every area's API uses, so it imports no area; the keys area implements this
 * (src/platform/keys/key-lookup.ts, over ApiKeys and its cache) and src/appliance.ts wires it.
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"

/** The key a request is made with: the spec's `app` is `keyId`. */
export interface Principal {
  readonly keyId: string
  readonly accountId: string
  readonly isAdmin: boolean
}

export class KeyLookup extends Context.Tag("herald/KeyLookup")<KeyLookup, {
  /** Who `token` is (none: unknown or revoked), from the key cache or else the database. */
  readonly authenticate: (token: string) => Effect.Effect<Option.Option<Principal>, SqlError.SqlError>
  /**
   * `authenticate` under a client address's failed-authentication count: a token the cache does
   * not know is looked up in the database only when `mayLookUp` grants it (a token valid here
   * recently always is).
   */
  readonly authenticateSparingly: (
    token: string,
    mayLookUp: Effect.Effect<boolean, SqlError.SqlError>
  ) => Effect.Effect<Option.Option<Principal>, SqlError.SqlError>
}>() {}
