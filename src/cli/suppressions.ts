/**
 * `herald suppressions add|remove|list (--account ID | --platform)`: an account's own suppression
 * list, or the platform list (account_id NULL) that applies to every account.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { isEmailAddress } from "../lib/email.ts"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { Suppressions } from "../platform/suppressions/Suppressions.ts"
import { withServices } from "./command-layers.ts"
import { operatorCommand, usage } from "./output.ts"

const scope = {
  account: Options.text("account").pipe(Options.optional, Options.withDescription("An account's own list")),
  platform: Options.boolean("platform").pipe(Options.withDescription("The platform list, for every account"))
}

/** The account id, or null for the platform list; exactly one of the two options. */
const resolveScope = (args: { readonly account: Option.Option<string>; readonly platform: boolean }) =>
  Effect.gen(function*() {
    if (Option.isSome(args.account) === args.platform) {
      return yield* Effect.fail(usage("give exactly one of --account ID or --platform"))
    }
    if (Option.isNone(args.account)) return null
    yield* (yield* Accounts).get(args.account.value)
    return args.account.value
  })

const email = Options.text("email").pipe(Options.withDescription("The address"))

const add = Command.make("add", {
  ...scope,
  email,
  reason: Options.choice("reason", ["manual", "bounce", "complaint", "unsubscribe"]).pipe(Options.withDefault("manual" as const))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    if (!isEmailAddress(args.email)) return yield* Effect.fail(usage(`--email: ${args.email} is not an email address`))
    const accountId = yield* resolveScope(args)
    const added = yield* (yield* Suppressions).add(accountId, args.email, args.reason, "operator")
    return { account_id: accountId, ...added }
  }).pipe(withServices))).pipe(
    Command.withDescription("Suppress an address: sends to it get item status `suppressed`")
  )

const remove = Command.make("remove", { ...scope, email }, (args) =>
  operatorCommand(Effect.gen(function*() {
    const accountId = yield* resolveScope(args)
    const removed = yield* (yield* Suppressions).remove(accountId, args.email)
    return { account_id: accountId, ...removed }
  }).pipe(withServices))).pipe(Command.withDescription("Take an address off a suppression list"))

const list = Command.make("list", {
  ...scope,
  email: Options.text("email").pipe(Options.optional, Options.withDescription("Only addresses containing this")),
  limit: Options.integer("limit").pipe(Options.withDefault(100)),
  offset: Options.integer("offset").pipe(Options.withDefault(0))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    if (args.limit < 1 || args.offset < 0) return yield* Effect.fail(usage("--limit must be at least 1, --offset at least 0"))
    const accountId = yield* resolveScope(args)
    const filter = { email: Option.getOrUndefined(args.email), limit: args.limit, offset: args.offset }
    const page = yield* (yield* Suppressions).list(accountId, filter)
    return { account_id: accountId, ...page }
  }).pipe(withServices))).pipe(Command.withDescription("List a suppression list, newest first"))

export const suppressionsCommand = Command.make("suppressions").pipe(Command.withSubcommands([add, remove, list]))
