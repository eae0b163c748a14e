/**
 * `.env` in the working directory, read at start-up when present (config/example.env is its
 * template). A variable already in the environment wins over the file: `HERALD_HTTP_PORT=9090
 * npm start` overrides the file's port, as with docker's `--env-file`. Read with `util.parseEnv`
 * (the syntax of Node's `--env-file`: comments, quotes, `export`), which Deno provides too.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as util from "node:util"

export const ENV_FILE = ".env"

/** Sets the file's variables that the environment lacks; the names it set (none without a file). */
export const loadEnvFile = (directory: string): ReadonlyArray<string> => {
  let text: string
  try {
    text = fs.readFileSync(path.join(directory, ENV_FILE), "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
    throw error
  }
  const set: Array<string> = []
  for (const [name, value] of Object.entries(util.parseEnv(text))) {
    if (value === undefined || process.env[name] !== undefined) continue
    process.env[name] = value
    set.push(name)
  }
  return set
}
