/**
 * What the operator commands run on, handed to them by the composition root: the CLI is an
 * interface to the appliance, not its root, so no command imports src/appliance.ts (docs/architecture.md
 * "Layering"). The commands ask for `CommandLayers`; src/main.ts provides it with the layers
 * src/appliance.ts composes. Each command builds the layer it uses, as it did when it imported it.
 */
import type { SqlClient } from "@effect/sql"
import { Context, Effect, type Layer } from "effect"
import type { AppConfig } from "../config/app-config.ts"
import type { Accounts } from "../platform/accounts/Accounts.ts"
import type { Domains } from "../platform/domains/Domains.ts"
import type { ApiKeys } from "../platform/keys/ApiKeys.ts"
import type { Suppressions } from "../platform/suppressions/Suppressions.ts"

/** The services the account, key, domain and suppression commands call. */
export type OperatorServices = SqlClient.SqlClient | Accounts | ApiKeys | Domains | Suppressions

export class CommandLayers extends Context.Tag("herald/CommandLayers")<CommandLayers, {
  /** `serve`: migrations, bootstrap, the HTTP API, the MX listener and the actors. */
  readonly appliance: Layer.Layer<never, unknown, AppConfig>
  /** The database with its schema up to date. */
  readonly database: Layer.Layer<SqlClient.SqlClient, unknown, AppConfig>
  /** The appliance's services over the database (no HTTP server, no actors). */
  readonly services: Layer.Layer<OperatorServices, unknown, AppConfig>
}>() {}

/** `effect` run with the appliance's services. */
export const withServices = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(CommandLayers, (layers) => Effect.provide(effect, layers.services))

/** `effect` run with the database, migrated. */
export const withDatabase = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(CommandLayers, (layers) => Effect.provide(effect, layers.database))
