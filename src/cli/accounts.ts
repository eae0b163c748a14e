/** `herald accounts create|list`: the accounts (the spec's users/clients) of this appliance. */
import { Command, Options } from "@effect/cli"
import { Effect, Option, ParseResult, Schema } from "effect"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { CreateAccountRequest } from "../platform/admin/Api.ts"
import { loadPlanCatalog } from "../platform/plans/plan-catalog.ts"
import { seedPlans } from "../platform/plans/Plans.ts"
import { withServices } from "./command-layers.ts"
import { operatorCommand, usage } from "./output.ts"

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

export const accountsCommand = Command.make("accounts").pipe(Command.withSubcommands([create, list]))
