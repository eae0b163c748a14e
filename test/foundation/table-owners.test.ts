/**
 * README "Who owns which table" is kept true: every table of migrations/ has an owner there, and
 * every statement in src/ that writes a table (INSERT, UPDATE, DELETE) is in that table's owner or
 * in a known exception the README gives with its reason. Keys and webhooks depend one way only.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/appliance.ts"

const filesUnder = (dir: string, ext: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full, ext) : entry.name.endsWith(ext) ? [full] : []
  })

const tables = new Set(filesUnder(path.join(repoRoot, "migrations"), ".sql").flatMap((file) =>
  [...fs.readFileSync(file, "utf8").matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF NOT EXISTS\s+)?([a-z_]+)/gi)].map((m) => m[1]!)))

const readme = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8")
const section = readme.slice(readme.indexOf("### Who owns which table"), readme.indexOf("Cross-area reads live in"))
const ticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
/** A backticked `table` or `table.column` names the table. */
const tablesIn = (text: string) => ticked(text).map((t) => t.split(".")[0]!).filter((t) => tables.has(t))
const pathsIn = (text: string) => ticked(text).filter((t) => t.startsWith("src/"))

/** Table → the files or folders that may write it: the table's owners and its known exceptions. */
const writers = new Map<string, Array<string>>()
const allow = (table: string, places: ReadonlyArray<string>) => writers.set(table, [...(writers.get(table) ?? []), ...places])
// A bullet's continuation lines (indented) join the bullet.
for (const line of section.replace(/\n {2}(?=\S)/g, " ").split("\n")) {
  const row = /^\| (.+?) \| (.+) \|$/.exec(line)
  if (row !== null) {
    // Owners are files or folders (`src/mta/queue/`); names without `src/` only explain a folder's parts.
    const owners = pathsIn(row[2]!)
    for (const table of tablesIn(row[1]!)) allow(table, owners)
  } else if (line.startsWith("- ")) {
    const [writer] = pathsIn(line)
    if (writer !== undefined) for (const table of tablesIn(line)) allow(table, [writer])
  }
}

/** The source without comments: prose that says "one UPDATE" is no statement. */
const code = (file: string) =>
  fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").split("\n").filter((l) => !l.trim().startsWith("//")).join("\n")

const sources = filesUnder(path.join(repoRoot, "src"), ".ts").map((file) => ({ file: path.relative(repoRoot, file), text: code(file) }))

const writes = sources.flatMap(({ file, text }) =>
  [...text.matchAll(/(?<!FOR\s+|KEY\s+)\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_]+)/g)]
    .filter((m) => tables.has(m[2]!))
    .map((m) => ({ file, table: m[2]!, statement: m[1]!.replace(/\s+/g, " ") })))

describe("who owns which table (README)", () => {
  it("finds the tables and the statements that write them", () => {
    expect(tables.has("deliveries")).toBe(true)
    expect(writes.some((w) => w.table === "deliveries" && w.file === "src/mta/queue/DeliveryQueue.ts")).toBe(true)
  })

  it("names an owner for every table of migrations/", () => {
    expect([...tables].filter((t) => (writers.get(t) ?? []).length === 0)).toEqual([])
  })

  it("finds every write of a table in its owner or a known exception", () => {
    const outside = writes.filter(({ file, table }) =>
      !(writers.get(table) ?? []).some((place) => file === place || (place.endsWith("/") && file.startsWith(place))))
    expect(outside.map((w) => `${w.file}: ${w.statement} ${w.table}`)).toEqual([])
  })

  it("sets a key's webhook URL and secret only in WebhookEndpoints", () => {
    const setters = sources.filter(({ text }) => /UPDATE\s+api_keys\s+SET[^`]*webhook_(url|secret)\s*=/.test(text))
    expect(setters.map((s) => s.file)).toEqual(["src/webhooks/WebhookEndpoints.ts"])
  })

  it("has keys depend on webhooks and not the other way round", () => {
    const webhooksImportingKeys = sources.filter(({ file, text }) =>
      file.startsWith("src/webhooks/") && /from\s+"[^"]*platform\/keys\//.test(text))
    expect(webhooksImportingKeys.map((s) => s.file)).toEqual([])
  })
})
