/**
 * Herald's entry point and composition root: read `.env`, parse the command line, run the chosen
 * command with configuration and logging, and let Effect's runMain handle SIGTERM/SIGINT
 * (graceful shutdown: scopes close in reverse order, so the HTTP server stops before the
 * database). `npm start` execs node, so a SIGTERM to the process it started reaches this one.
 *
 * What is printed where: `serve` logs to stdout. The operator commands print only JSON on stdout
 * and log to stderr; anything that stops them (bad arguments, bad configuration, a bug) ends as
 * one `{"error": {"code", "message"}}` line on stderr with exit code 1 (src/cli/output.ts).
 */
import cluster from "node:cluster"
import * as util from "node:util"
import { Command, HelpDoc, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { CommandLayers } from "./cli/command-layers.ts"
import { herald } from "./cli/commands.ts"
import { loadEnvFile } from "./cli/env-file.ts"
import { forStream, refuse, refuseCause, stripAnsi, usage } from "./cli/output.ts"
import { AppConfigLive } from "./config/app-config.ts"
import { applyProfile } from "./config/dev-profile.ts"
import { readHostFacts, resolveProcesses } from "./config/process-share.ts"
import { loggingTo } from "./logging.ts"
import { VERSION } from "./version.ts"

try {
  loadEnvFile(process.cwd())
} catch (error) {
  process.stderr.write(`herald: cannot read .env: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}

// After .env, which may name the profile; before any configuration is read.
const profile = applyProfile(process.env)
if (profile._tag === "Refused") {
  process.stderr.write(`${profile.line}\n`)
  process.exit(1)
}

/** The first word of the command line that is neither an option nor the value of a built-in one. */
const commandWord = (args: ReadonlyArray<string>): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--log-level" || args[i] === "--completions") i++
    else if (!args[i]!.startsWith("-")) return args[i]
  }
  return undefined
}

/** @effect/cli's built-in options that answer without running a command. */
const builtInAnswers = ["--help", "-h", "--version", "--wizard", "--completions"]

/** `herald` and `herald serve` run the appliance; any other word is an operator command, and a built-in answer is neither. */
const serving = ((args) => {
  const word = commandWord(args)
  return word === "serve" || (word === undefined && !args.some((arg) => builtInAnswers.includes(arg)))
})(process.argv.slice(2))

// The trial profile says what it set once, as the appliance starts (operator commands stay quiet;
// so do the workers of a supervisor, which said it).
if (serving && profile._tag === "Applied" && !cluster.isWorker) process.stderr.write(`${profile.line}\n`)

/**
 * HERALD_PROCESSES (src/config/process-share.ts): above 1, `serve` runs the supervisor, which forks
 * that many workers of this same command (each of them a node:cluster worker, running the
 * appliance). Deno has no node:cluster's shared sockets: it runs one process and says so.
 */
const processes = ((): number => {
  if (!serving || cluster.isWorker) return 1
  const resolved = resolveProcesses(process.env["HERALD_PROCESSES"], readHostFacts())
  if (resolved._tag === "Refused") {
    process.stderr.write(`${resolved.line}\n`)
    process.exit(1)
  }
  if (resolved.processes > 1 && "Deno" in globalThis) {
    process.stderr.write(`herald: under Deno the appliance runs as one process (HERALD_PROCESSES=${resolved.processes} applies under Node)\n`)
    return 1
  }
  return resolved.processes
})()

/**
 * The composition root, loaded when a command first builds a layer: `--help`, `--version` and a
 * refused argument never load the areas (the compiled bundle splits it into its own chunks, see
 * scripts/build-server.mjs), and an operator command loads them only as it starts.
 */
const composition = Effect.promise(() => import("./appliance.ts"))
const composed = <A, E, R>(pick: (root: typeof import("./appliance.ts")) => Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(composition, pick))

const CommandLineBaseLive = serving ? composed((root) => root.BaseLive) : Layer.merge(AppConfigLive, Layer.provide(loggingTo("stderr"), AppConfigLive))

/**
 * The Console that @effect/cli prints through: help and version as plain text when stdout is not
 * a terminal; its own rendering of a parse error is dropped, since the ValidationError is printed
 * below as the JSON refusal. (Herald's loggers write through `unsafe`, kept as it is, and the
 * commands' own output goes to the streams directly.)
 */
const commandLineConsole = (base: Console.Console): Console.Console => ({
  ...base,
  log: (...args) => Effect.sync(() => void process.stdout.write(`${forStream(process.stdout, util.format(...args))}\n`)),
  error: () => Effect.void
})

const cli = Command.run(herald, { name: "herald", version: VERSION })

const program = cli(process.argv).pipe(
  Effect.catchIf(ValidationError.isValidationError, (error) => refuse(usage(helpText(error)))),
  // The layers the commands run on: composed by appliance.ts, handed to the CLI here (command-layers.ts).
  Effect.provideService(CommandLayers, {
    appliance: processes > 1 ? composed((root) => root.supervisorLive(processes)) : composed((root) => root.ApplianceLive),
    database: composed((root) => root.DatabaseReadyLive),
    services: composed((root) => root.ServicesLive)
  }),
  Effect.provide(Layer.merge(CommandLineBaseLive, NodeContext.layer)),
  // The appliance keeps runMain's reporting (a configuration error is logged with its variable);
  // a command ends with a refusal line instead.
  serving ? (effect) => effect : Effect.catchAllCause(refuseCause)
)

Effect.consoleWith((base) => Effect.withConsole(program, commandLineConsole(base))).pipe(
  NodeRuntime.runMain({ disablePrettyLogger: true })
)

/** A parse error's text, one line (the options it names, without the help page's layout). */
function helpText(error: ValidationError.ValidationError): string {
  return stripAnsi(HelpDoc.toAnsiText(error.error)).split("\n").map((line) => line.trim()).filter((line) => line !== "").join("; ")
}
