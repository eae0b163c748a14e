/**
 * What lifting an account's pause means to the areas above platform: a port. The MTA holds an
 * account's deliveries while its sending is paused (src/mta/queue/delivery-checks.ts) and provides
 * the layer that makes them due again (src/mta/port-layers.ts); src/appliance.ts wires it. Accounts calls
 * it after the UPDATE that lifts the pause.
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

export class AccountHooks extends Context.Tag("herald/AccountHooks")<AccountHooks, {
  /** An admin lifted `accountId`'s sending pause at `at`: what waited for it may go now. */
  readonly sendingResumed: (accountId: string, at: Date) => Effect.Effect<void, SqlError.SqlError>
}>() {}
