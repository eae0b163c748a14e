/**
 * The layering check of `npm run check` (DESIGN.md "Layout", docs/architecture.md): areas import
 * downwards only, and `src/` has no import cycles. A small script rather than dependency-cruiser or
 * an eslint plugin: the rules are a dozen lines of data, the import syntax Herald uses is plain
 * (`import … from "./x.ts"`, `export … from`, `import("./x.ts")`), and the message can say which
 * rule an import breaks and why the rule exists.
 *
 * Known violations that predate the check are listed in `scripts/layers-baseline.txt`, one
 * `from -> to` file pair a line; they are reported but do not fail, and the list may only shrink
 * (a pair that no longer occurs must be removed from it). Every new upward import fails.
 *
 *   npx tsx scripts/check-layers.ts            check (exit 1 on a new violation or a stale baseline)
 *   npx tsx scripts/check-layers.ts --report   print every violation and cycle, baseline included
 */
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const src = path.join(root, "src")
const baselineFile = path.join(root, "scripts/layers-baseline.txt")

/**
 * Each area's rank: an area may import its own files and areas of a LOWER rank only. Areas of one
 * rank are peers and do not import each other (mta, inbound and webhooks stand beside each other;
 * a peer that needs another's work gets it through a service the composition root wires).
 */
const RANKS: Record<string, number> = {
  root: 100, // src/main.ts, src/appliance.ts (+ logging.ts): the composition root may import everything
  api: 90,
  cli: 90,
  supervisor: 80, // the node:cluster primary of HERALD_PROCESSES > 1: the floor only; the root hands it the rest
  bulk: 60,
  transactional: 50,
  mta: 40,
  inbound: 40,
  webhooks: 40,
  platform: 30,
  events: 20,
  http: 20,
  db: 12, // the floor is ordered too: the database reads its configuration, which uses lib's checks
  config: 10,
  lib: 0
}

const WHY: Record<string, string> = {
  up: "areas import downwards only (api → bulk → transactional → mta/inbound/webhooks → platform → events/http → db → config → lib); " +
    "where a lower area must reach a higher one, it declares a Context.Tag (a port) and the higher area provides the Layer, wired in src/appliance.ts",
  peer: "peer areas do not import each other: what one needs of another comes through a service the composition root wires",
  cycle: "a cycle makes the files one unit that can only be understood, tested and moved together"
}

/** The area a file under src/ belongs to. */
const areaOf = (file: string): string => {
  const relative = path.relative(src, file).split(path.sep)
  if (relative.length === 1) {
    const name = relative[0]!
    // logging.ts is the log layer the composition root installs; version.ts is the floor.
    return ["main.ts", "appliance.ts", "logging.ts"].includes(name) ? "root" : "lib"
  }
  const area = relative[0]!
  if (!(area in RANKS)) throw new Error(`${path.relative(root, file)}: folder src/${area} has no rank in scripts/check-layers.ts`)
  return area
}

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"|import\(\s*"(\.{1,2}\/[^"]+)"\s*\)|new URL\(\s*"(\.{1,2}\/[^"]+\.ts)"/g

/** The files `file` imports, resolved to absolute paths (relative imports only: packages are not areas). */
const importsOf = (file: string): Array<string> => {
  const text = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "")
  return [...text.matchAll(IMPORT)].map((m) => path.resolve(path.dirname(file), (m[1] ?? m[2] ?? m[3])!))
    .filter((target) => target.startsWith(src + path.sep) && fs.existsSync(target))
}

const rel = (file: string) => path.relative(root, file)

interface Violation {
  readonly pair: string
  readonly rule: "up" | "peer" | "cycle"
  readonly detail: string
}

const layerViolations = (graph: Map<string, Array<string>>): Array<Violation> =>
  [...graph].flatMap(([from, targets]) =>
    targets.flatMap((to): Array<Violation> => {
      const a = areaOf(from)
      const b = areaOf(to)
      if (a === b || a === "root") return []
      if (RANKS[b]! < RANKS[a]!) return []
      const rule = RANKS[b] === RANKS[a] ? "peer" : "up"
      return [{ pair: `${rel(from)} -> ${rel(to)}`, rule, detail: `${a}/ imports ${b}/` }]
    }))

/** Tarjan's strongly connected components: each component of more than one file is a cycle. */
const cycles = (graph: Map<string, Array<string>>): Array<Array<string>> => {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.map(rel).sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

const graph = new Map(sourceFiles(src).map((file) => [file, importsOf(file)]))
const violations: Array<Violation> = [
  ...layerViolations(graph),
  ...cycles(graph).map((files): Violation => ({ pair: `cycle: ${files.join(" ")}`, rule: "cycle", detail: `${files.length} files` }))
]
const baseline = new Set(fs.existsSync(baselineFile)
  ? fs.readFileSync(baselineFile, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))
  : [])

if (process.argv.includes("--report")) {
  for (const v of violations) console.log(`${baseline.has(v.pair) ? "known" : "NEW  "} [${v.rule}] ${v.pair} (${v.detail})`)
  console.log(`${violations.length} violations, ${violations.filter((v) => !baseline.has(v.pair)).length} new`)
} else {
  const fresh = violations.filter((v) => !baseline.has(v.pair))
  const present = new Set(violations.map((v) => v.pair))
  const stale = [...baseline].filter((pair) => !present.has(pair))
  for (const v of fresh) console.error(`layers: ${v.pair}\n  breaks "${v.rule}" (${v.detail}): ${WHY[v.rule]}`)
  for (const pair of stale) console.error(`layers: ${pair} no longer occurs: remove it from scripts/layers-baseline.txt`)
  if (fresh.length > 0 || stale.length > 0) process.exit(1)
  console.log(`layers: ${graph.size} files, no new violations (${baseline.size} known, in scripts/layers-baseline.txt)`)
}
