/**
 * Migrations are registered by name in src/db/migrator.ts, never found by scanning (a stray file
 * must not change the schema). So a file added to migrations/ without its line there would never
 * run: this says so, and keeps the numbering without gaps or repeats.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { migrationFiles } from "../../src/db/migrator.ts"

describe("migrations/", () => {
  it("has every file registered in order, numbered 1, 2, 3, … without a gap or a repeat", () => {
    const files = fs.readdirSync(new URL("../../migrations/", import.meta.url)).filter((f) => f.endsWith(".sql")).sort()
    expect([...migrationFiles]).toEqual(files)
    expect(files.map((f) => Number(f.slice(0, 4)))).toEqual(files.map((_, i) => i + 1))
  })
})
