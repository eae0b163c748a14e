/** The keys area's side of authentication's port (src/http/key-lookup.ts): ApiKeys answers who a token is. */
import { Effect, Layer } from "effect"
import { KeyLookup } from "../../http/key-lookup.ts"
import { ApiKeys } from "./ApiKeys.ts"

export const KeyLookupLive = Layer.effect(
  KeyLookup,
  Effect.map(ApiKeys, (keys) => ({ authenticate: keys.authenticate, authenticateSparingly: keys.authenticateSparingly }))
)
