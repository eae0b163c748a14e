/** `herald accounts create|list`: the accounts (the spec's users/clients) of this appliance. */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { ServicesLive } from "../appliance.ts"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { loadPlanCatalog } from "../platform/plans/plan-catalog.ts"
import { seedPlans } from "../platform/plans/Plans.ts"
import { operatorCommand } from "./output.ts"

const create = Command.make("create", {
  name: Options.text("name"),
  email: Options.text("email"),
  password: Options.text("password"),
  admin: Options.boolean("admin"),
  packageId: Options.optional(Options.text("package"))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    yield* seedPlans(yield* loadPlanCatalog)
    const accounts = yield* Accounts
    return yield* accounts.create({
      name: args.name,
      email: args.email,
      password: args.password,
      isAdmin: args.admin,
      packageId: Option.getOrUndefined(args.packageId)
    })
  }).pipe(Effect.provide(ServicesLive)))).pipe(Command.withDescription("Create an account"))

const list = Command.make("list", {}, () =>
  operatorCommand(Effect.gen(function*() {
    const items = yield* (yield* Accounts).list()
    return { total: items.length, items }
  }).pipe(Effect.provide(ServicesLive)))).pipe(
    Command.withDescription("List every account: id, name, email, admin flag, status, plan")
  )

export const accountsCommand = Command.make("accounts").pipe(Command.withSubcommands([create, list]))
