/**
 * Operator commands of the single entry point (`npm run herald -- <command>`): what an operator
 * needs to drive a fresh appliance from a shell. `serve` (the default) runs the appliance.
 * Each group lives in its own file; every other command prints only JSON on stdout, and a refusal
 * as a JSON line on stderr with exit code 1 (see output.ts).
 */
import * as fs from "node:fs"
import { Args, Command } from "@effect/cli"
import { Effect, Layer } from "effect"
import { isSupervisedWorker, StartRefused } from "../config/process-share.ts"
import { migrationFiles } from "../db/migrator.ts"
import { accountsCommand } from "./accounts.ts"
import { blockedDomainsCommand } from "./blocked-domains.ts"
import { CommandLayers, withDatabase } from "./command-layers.ts"
import { domainsCommand } from "./domains.ts"
import { keysCommand } from "./keys.ts"
import { ensureListenAddressesFree } from "./listen-addresses.ts"
import { operatorCommand } from "./output.ts"
import { ensureProductionUrls } from "./production-urls.ts"
import { ensureNoTestSettings } from "./production-test-settings.ts"
import { suppressionsCommand } from "./suppressions.ts"
import { tlsRptCommand } from "./tlsrpt.ts"

const refuseStart = (line: string) =>
  Effect.sync(() => {
    process.stderr.write(`${line}\n`)
    process.exitCode = 1
  })

/**
 * The appliance, once its public URLs suit its environment (production-urls.ts) and its listen
 * addresses are known to be free. Either refusal ends start-up with its one line on stderr and
 * exit code 1, before the database or any actor starts.
 */
const runAppliance = Effect.gen(function*() {
  const started = yield* ensureProductionUrls.pipe(
    Effect.zipRight(ensureNoTestSettings),
    // A worker of the supervisor (HERALD_PROCESSES > 1) shares sockets its siblings already hold:
    // the supervisor checked the addresses before it forked them.
    Effect.zipRight(isSupervisedWorker() ? Effect.void : ensureListenAddressesFree),
    Effect.as(true),
    Effect.catchTags({
      InsecurePublicUrl: (error) => Effect.as(refuseStart(error.message), false),
      TestSettingInProduction: (error) => Effect.as(refuseStart(error.message), false),
      ListenAddressUnavailable: (error) => Effect.as(refuseStart(error.message), false)
    })
  )
  if (!started) return
  // The supervisor's refusal of a database server too small for its processes is one line too.
  yield* Layer.launch((yield* CommandLayers).appliance).pipe(
    Effect.catchIf((error): error is StartRefused => error instanceof StartRefused, (error) => refuseStart(error.message))
  )
})

export const serve = Command.make("serve", {}, () => runAppliance).pipe(
  Command.withDescription("Run the appliance (HTTP API, MX listener and the actors); the default")
)

const migrate = Command.make("migrate", {}, () =>
  operatorCommand(
    Effect.succeed({ status: "up_to_date", migration_id: migrationFiles.length }).pipe(withDatabase)
  )).pipe(
    Command.withDescription("Apply pending database migrations and exit")
  )

/** What Herald understands of one message or bare DMARC attachment; touches no database. */
const parse = Command.make("parse", { file: Args.file({ name: "FILE", exists: "yes" }) }, ({ file }) =>
  operatorCommand(Effect.gen(function*() {
    const bytes = yield* Effect.sync(() => fs.readFileSync(file))
    // The parsers load only for this command: every other command starts without them (docs/operating.md).
    const [{ understandFile }, { toParseOutput }] = yield* Effect.promise(() =>
      Promise.all([import("../inbound/understand.ts"), import("../inbound/parse-output.ts")])
    )
    return toParseOutput(yield* Effect.promise(() => understandFile(bytes, file)))
  }))).pipe(Command.withDescription("Print, as JSON, what Herald understands of a bounce, complaint or DMARC report file"))

export const herald = Command.make("herald", {}, () => runAppliance).pipe(
  Command.withSubcommands([
    serve,
    migrate,
    parse,
    accountsCommand,
    keysCommand,
    suppressionsCommand,
    blockedDomainsCommand,
    domainsCommand,
    tlsRptCommand
  ])
)
