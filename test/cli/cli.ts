/** Running operator commands (`src/main.ts <args>`) against one database and reading their JSON. */
import { expect } from "vitest"
import { type CommandResult, runMain } from "../support/appliance.ts"

export interface CliResult extends CommandResult {
  // The commands print arbitrary JSON shapes; each assertion states what it expects.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

/** A command start-up under a loaded machine can take tens of seconds. */
const COMMAND_TIMEOUT_MS = 240_000

/** Runs a command that must succeed and returns its printed JSON. */
export const cli = async (databaseUrl: string, args: ReadonlyArray<string>): Promise<CliResult> => {
  const result = await runMain(args, { DATABASE_URL: databaseUrl }, COMMAND_TIMEOUT_MS)
  expect(result.code, `${args.join(" ")}\n${result.stdout}\n${result.stderr}`).toBe(0)
  return { ...result, json: JSON.parse(result.stdout.slice(result.stdout.indexOf("{\n"))) }
}

/** Runs a command that must be refused and returns its `{"error": …}` from stderr. */
export const cliRefused = async (databaseUrl: string, args: ReadonlyArray<string>): Promise<CliResult> => {
  const result = await runMain(args, { DATABASE_URL: databaseUrl }, COMMAND_TIMEOUT_MS)
  expect(result.code, `${args.join(" ")}\n${result.stdout}\n${result.stderr}`).toBe(1)
  const line = result.stderr.split("\n").find((l) => l.startsWith("{\"error\""))
  expect(line, result.stderr).toBeDefined()
  return { ...result, json: JSON.parse(line!) }
}
