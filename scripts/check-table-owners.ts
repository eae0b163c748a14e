/**
 * The table-owner check of `npm run check` (docs/architecture.md "Who owns which table"): every table of
 * migrations/ has an owner there, and every statement in src/ that writes a table (INSERT, UPDATE,
 * DELETE) is in that table's owner or in a known exception docs/architecture.md gives with its reason.
 * test/foundation/table-owners.test.ts asserts the same report inside `npm test`.
 *
 *   npx tsx scripts/check-table-owners.ts     exit 1 naming each unowned table and each write outside its owner
 */
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")

const filesUnder = (dir: string, ext: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full, ext) : entry.name.endsWith(ext) ? [full] : []
  })

/** The source without comments: prose that says "one UPDATE" is no statement. */
const code = (file: string) =>
  fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").split("\n").filter((l) => !l.trim().startsWith("//")).join("\n")

export interface TableWrite {
  readonly file: string
  readonly table: string
  readonly statement: string
}

export interface TableOwnerReport {
  readonly tables: ReadonlySet<string>
  /** Every source file under src/, relative to the repository, without comments. */
  readonly sources: ReadonlyArray<{ readonly file: string; readonly text: string }>
  readonly writes: ReadonlyArray<TableWrite>
  /** Tables of migrations/ docs/architecture.md names no owner for. */
  readonly unowned: ReadonlyArray<string>
  /** Writes outside the table's owner and its known exceptions. */
  readonly outside: ReadonlyArray<TableWrite>
}

/** Reads migrations/, the section of docs/architecture.md and src/ as they are on disk. */
export const tableOwnerReport = (): TableOwnerReport => {
  const tables = new Set(filesUnder(path.join(root, "migrations"), ".sql").flatMap((file) =>
    [...fs.readFileSync(file, "utf8").matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF NOT EXISTS\s+)?([a-z_]+)/gi)].map((m) => m[1]!)))

  const architectureDoc = fs.readFileSync(path.join(root, "docs", "architecture.md"), "utf8")
  const section = architectureDoc.slice(architectureDoc.indexOf("## Who owns which table"), architectureDoc.indexOf("Cross-area reads live in"))
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

  const sources = filesUnder(path.join(root, "src"), ".ts").map((file) => ({ file: path.relative(root, file), text: code(file) }))
  const writes = sources.flatMap(({ file, text }) =>
    [...text.matchAll(/(?<!FOR\s+|KEY\s+)\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_]+)/g)]
      .filter((m) => tables.has(m[2]!))
      .map((m) => ({ file, table: m[2]!, statement: m[1]!.replace(/\s+/g, " ") })))

  return {
    tables,
    sources,
    writes,
    unowned: [...tables].filter((t) => (writers.get(t) ?? []).length === 0),
    outside: writes.filter(({ file, table }) =>
      !(writers.get(table) ?? []).some((place) => file === place || (place.endsWith("/") && file.startsWith(place))))
  }
}

const WHY = "one owning module writes each table, so a table's invariants live in one place; another area changes it by calling the owner " +
  "(or through a port the owner provides). A real exception is listed in docs/architecture.md \"Who owns which table\" with its reason."

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const report = tableOwnerReport()
  for (const table of report.unowned) console.error(`table owners: ${table} has no owner in docs/architecture.md "Who owns which table"`)
  for (const w of report.outside) console.error(`table owners: ${w.file}: ${w.statement} ${w.table} is outside the table's owner — ${WHY}`)
  const failed = report.unowned.length + report.outside.length
  console.log(failed === 0
    ? `table owners: ${report.tables.size} tables, ${report.writes.length} writes, each in its owner or a known exception`
    : `table owners: ${failed} violation(s)`)
  process.exitCode = failed === 0 ? 0 : 1
}
