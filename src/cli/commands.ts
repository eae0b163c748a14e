/**
 * Operator commands of the single entry point (`npm run herald -- <command>`): what an operator
 * needs to drive a fresh appliance from a shell. `serve` (the default) runs the appliance.
 * Each group lives in its own file; every command prints JSON (see output.ts).
 */
import * as fs from "node:fs"
import { Args, Command } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import { ApplianceLive, DatabaseReadyLive } from "../appliance.ts"
import { toParseOutput } from "../inbound/parse-output.ts"
import { understandFile } from "../inbound/understand.ts"
import { accountsCommand } from "./accounts.ts"
import { blockedDomainsCommand } from "./blocked-domains.ts"
import { domainsCommand } from "./domains.ts"
import { keysCommand } from "./keys.ts"
import { printJson } from "./output.ts"
import { suppressionsCommand } from "./suppressions.ts"

export const serve = Command.make("serve", {}, () => Layer.launch(ApplianceLive)).pipe(
  Command.withDescription("Run the appliance (HTTP API, MX listener and the actors); the default")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    yield* Console.log("migrations are up to date")
  }).pipe(Effect.provide(DatabaseReadyLive))).pipe(
    Command.withDescription("Apply pending database migrations and exit")
  )

/** What Herald understands of one message or bare DMARC attachment; touches no database. */
const parse = Command.make("parse", { file: Args.file({ name: "FILE", exists: "yes" }) }, ({ file }) =>
  Effect.gen(function*() {
    const bytes = yield* Effect.sync(() => fs.readFileSync(file))
    const understood = yield* Effect.promise(() => understandFile(bytes, file))
    yield* printJson(toParseOutput(understood))
  })).pipe(Command.withDescription("Print, as JSON, what Herald understands of a bounce, complaint or DMARC report file"))

export const herald = Command.make("herald", {}, () => Layer.launch(ApplianceLive)).pipe(
  Command.withSubcommands([
    serve,
    migrate,
    parse,
    accountsCommand,
    keysCommand,
    suppressionsCommand,
    blockedDomainsCommand,
    domainsCommand
  ])
)
