/** `herald accounts create|list|set-password`: the accounts (the spec's users/clients) of this appliance. */
import { Command, Options } from "@effect/cli"
import { Effect, Option, ParseResult, Schema } from "effect"
import { NewPassword } from "../lib/password-rules.ts"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { markOnce } from "../platform/appliance-secrets.ts"
import { CONSOLE_PASSWORD_KNOWN } from "../platform/bootstrap.ts"
import { CreateAccountRequest } from "../platform/admin/Api.ts"
import { loadPlanCatalog } from "../platform/plans/plan-catalog.ts"
import { seedPlans } from "../platform/plans/Plans.ts"
import { withServices } from "./command-layers.ts"
import { operatorCommand, usage } from "./output.ts"
import { readPassword } from "./password-input.ts"

/** The request's fields as the command's options, for naming the option a refusal is about. */
const OPTION_OF: Record<string, string> = { name: "--name", email: "--email", password: "--password", package_id: "--package" }

/** The same rules as POST /v1/admin/accounts (a password of at least 8 characters, a real address). */
const validCreateRequest = (input: unknown) =>
  Schema.decodeUnknown(CreateAccountRequest)(input, { errors: "first" }).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      const option = OPTION_OF[String(issue?.path[0] ?? "")] ?? "arguments"
      return usage(`${option}: ${issue?.message ?? "invalid"}`)
    })
  )

const create = Command.make("create", {
  name: Options.text("name"),
  email: Options.text("email"),
  password: Options.text("password"),
  admin: Options.boolean("admin"),
  packageId: Options.optional(Options.text("package"))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    // Checked before the database is opened: a refusal touches nothing.
    const request = yield* validCreateRequest({
      name: args.name,
      email: args.email,
      password: args.password,
      ...Option.match(args.packageId, { onNone: () => ({}), onSome: (id) => ({ package_id: id }) })
    })
    return yield* Effect.gen(function*() {
      yield* seedPlans(yield* loadPlanCatalog)
      return yield* (yield* Accounts).create({
        name: request.name,
        email: request.email,
        password: request.password,
        isAdmin: args.admin,
        packageId: request.package_id
      })
    }).pipe(withServices)
  }))).pipe(
    Command.withDescription("Create an account (the admin API's rules: a password of at least 8 characters)")
  )

const list = Command.make("list", {}, () =>
  operatorCommand(Effect.gen(function*() {
    const items = yield* (yield* Accounts).list()
    return { total: items.length, items }
  }).pipe(withServices))).pipe(
    Command.withDescription("List every account: id, name, email, admin flag, status, plan")
  )

/**
 * A new console password for one account, read from stdin (password-input.ts); the rules of
 * src/lib/password-rules.ts. Ends the account's console sessions. Setting an admin's marks the
 * first start's generated password as replaced: bootstrap never prints or replaces it after this.
 */
const setPassword = Command.make("set-password", { account: Options.text("account") }, (args) =>
  operatorCommand(Effect.gen(function*() {
    const raw = yield* readPassword
    // Checked before the database is opened: a refusal touches nothing.
    const password = yield* Schema.decodeUnknown(NewPassword)(raw).pipe(
      Effect.mapError((error) => usage(ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "invalid password"))
    )
    return yield* Effect.gen(function*() {
      const accounts = yield* Accounts
      const account = yield* accounts.find(args.account)
      const { sessions_ended } = yield* accounts.setPassword(account.id, password)
      if (account.is_admin) yield* markOnce(CONSOLE_PASSWORD_KNOWN)
      return { id: account.id, email: account.email, password_set: true, sessions_ended }
    }).pipe(withServices)
  }))).pipe(
    Command.withDescription(
      "Set an account's console password, read from stdin (typed without echo, or the first line piped in); " +
        "at least 8 characters. Ends the account's console sessions. --account takes an id or an email"
    )
  )

export const accountsCommand = Command.make("accounts").pipe(Command.withSubcommands([create, list, setPassword]))
