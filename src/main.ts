/**
 * Herald's entry point and composition root: parse the command line, run the chosen command with
 * configuration and logging, and let Effect's runMain handle SIGTERM/SIGINT (graceful shutdown:
 * scopes close in reverse order, so the HTTP server stops before the database).
 */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { BaseLive } from "./appliance.ts"
import { herald } from "./cli/commands.ts"
import { VERSION } from "./version.ts"

const cli = Command.run(herald, { name: "herald", version: VERSION })

cli(process.argv).pipe(
  Effect.provide(Layer.merge(BaseLive, NodeContext.layer)),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
