/** `herald keys create|list|revoke`: API keys from a shell (the token is printed only by create). */
import { Command, Options } from "@effect/cli"
import { Clock, Effect } from "effect"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { ApiKeys } from "../platform/keys/ApiKeys.ts"
import { withServices } from "./command-layers.ts"
import { operatorCommand } from "./output.ts"

const account = Options.text("account").pipe(Options.withDescription("The account's id (acc_…)"))

const create = Command.make("create", { account, label: Options.text("label") }, (args) =>
  operatorCommand(Effect.gen(function*() {
    yield* (yield* Accounts).get(args.account)
    return yield* (yield* ApiKeys).create(args.account, args.label)
  }).pipe(withServices))).pipe(
    Command.withDescription("Create an API key for an account; prints its token once")
  )

const list = Command.make("list", { account }, (args) =>
  operatorCommand(Effect.gen(function*() {
    yield* (yield* Accounts).get(args.account)
    const items = yield* (yield* ApiKeys).list(args.account)
    return { total: items.length, items }
  }).pipe(withServices))).pipe(
    Command.withDescription("List an account's active keys (no tokens: only the last four characters)")
  )

const revoke = Command.make("revoke", { id: Options.text("id").pipe(Options.withDescription("The key's id (key_…)")) }, (args) =>
  operatorCommand(Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    return yield* (yield* ApiKeys).revokeById(args.id, now)
  }).pipe(withServices))).pipe(
    Command.withDescription("Revoke a key of any account: its token stops working at once")
  )

export const keysCommand = Command.make("keys").pipe(Command.withSubcommands([create, list, revoke]))
