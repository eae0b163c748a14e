/**
 * Operator commands of the single entry point (`npm run herald -- <command>`): what an operator
 * needs to drive a fresh appliance from a shell. `serve` (the default) runs the appliance.
 */
import * as fs from "node:fs"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { ApplianceLive, DatabaseReadyLive, ServicesLive } from "../appliance.ts"
import { toParseOutput } from "../inbound/parse-output.ts"
import { understandFile } from "../inbound/understand.ts"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { ApiKeys } from "../platform/keys/ApiKeys.ts"
import { loadPlanCatalog } from "../platform/plans/plan-catalog.ts"
import { seedPlans } from "../platform/plans/Plans.ts"

const json = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

export const serve = Command.make("serve", {}, () => Layer.launch(ApplianceLive)).pipe(
  Command.withDescription("Run the appliance (HTTP API, and the actors as they arrive); the default")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    yield* Console.log("migrations are up to date")
  }).pipe(Effect.provide(DatabaseReadyLive))).pipe(
    Command.withDescription("Apply pending database migrations and exit")
  )

const accountsCreate = Command.make("create", {
  name: Options.text("name"),
  email: Options.text("email"),
  password: Options.text("password"),
  admin: Options.boolean("admin"),
  packageId: Options.optional(Options.text("package"))
}, (args) =>
  Effect.gen(function*() {
    yield* seedPlans(yield* loadPlanCatalog)
    const accounts = yield* Accounts
    const account = yield* accounts.create({
      name: args.name,
      email: args.email,
      password: args.password,
      isAdmin: args.admin,
      packageId: Option.getOrUndefined(args.packageId)
    })
    yield* json(account)
  }).pipe(Effect.provide(ServicesLive))).pipe(Command.withDescription("Create an account"))

const keysCreate = Command.make("create", {
  account: Options.text("account"),
  label: Options.text("label")
}, (args) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    yield* accounts.get(args.account)
    const keys = yield* ApiKeys
    yield* json(yield* keys.create(args.account, args.label))
  }).pipe(Effect.provide(ServicesLive))).pipe(
    Command.withDescription("Create an API key for an account; prints its token once")
  )

/** What Herald understands of one message or bare DMARC attachment; touches no database. */
const parse = Command.make("parse", { file: Args.file({ name: "FILE", exists: "yes" }) }, ({ file }) =>
  Effect.gen(function*() {
    const bytes = yield* Effect.sync(() => fs.readFileSync(file))
    const understood = yield* Effect.promise(() => understandFile(bytes, file))
    yield* json(toParseOutput(understood))
  })).pipe(Command.withDescription("Print, as JSON, what Herald understands of a bounce, complaint or DMARC report file"))

export const herald = Command.make("herald", {}, () => Layer.launch(ApplianceLive)).pipe(
  Command.withSubcommands([
    serve,
    migrate,
    parse,
    Command.make("accounts").pipe(Command.withSubcommands([accountsCreate])),
    Command.make("keys").pipe(Command.withSubcommands([keysCreate]))
  ])
)
