/**
 * The console for tests: built into a temporary folder of the test's own (never dist/console,
 * which a developer's build or another test file may be rewriting), and an appliance serving it.
 */
import { mkdtemp, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { buildConsole, type BuildResult } from "../../scripts/build-console.ts"
import { type Appliance, startAppliance, type StartOptions } from "./appliance.ts"

export interface ConsoleAppliance {
  readonly app: Appliance
  readonly build: BuildResult
  readonly stop: () => Promise<void>
}

export const startConsoleAppliance = async (options: StartOptions = {}): Promise<ConsoleAppliance> => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "herald-console-"))
  const build = await buildConsole(dir)
  const app = await startAppliance({ ...options, env: { ...options.env, HERALD_CONSOLE_DIR: dir } })
  return {
    app,
    build,
    stop: async () => {
      await app.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
