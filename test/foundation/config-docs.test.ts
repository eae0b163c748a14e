/**
 * Every variable the code reads is documented: in docs/configuration.md and in
 * config/example.env. A new variable without its documentation fails here.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/appliance.ts"

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

const variables = [...new Set(
  sourceFiles(path.join(repoRoot, "src")).flatMap((file) =>
    [...fs.readFileSync(file, "utf8").matchAll(/"((?:HERALD|MAX)_[A-Z_]+|DATABASE_URL)"/g)].map((m) => m[1]!))
)].sort()

const configurationDoc = fs.readFileSync(path.join(repoRoot, "docs", "configuration.md"), "utf8")
const exampleEnv = fs.readFileSync(path.join(repoRoot, "config/example.env"), "utf8")

describe("configuration documentation", () => {
  it("finds the variables the code reads", () => {
    expect(variables).toContain("HERALD_HTTP_PORT")
    expect(variables).toContain("HERALD_DMARC_FAIL_THRESHOLD")
  })

  it.each(variables)("documents %s in docs/configuration.md and in config/example.env", (name) => {
    expect(configurationDoc).toContain(`\`${name}\``)
    expect(exampleEnv).toMatch(new RegExp(`^#? ?${name}=`, "m"))
  })
})
