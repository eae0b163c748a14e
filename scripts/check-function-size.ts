/**
 * No function in src/ over MAX_LINES lines of its own code (issue #27): blank lines, comments and
 * the bodies of functions nested inside it are not counted, so an Effect.gen service whose methods
 * are small closures counts only its own wiring. Read with the TypeScript compiler's parser, the
 * same one `tsc` uses, so what counts as a function is what the language says.
 *
 * Functions over the limit that predate the check are listed in
 * `scripts/function-size-baseline.txt` (`file:name` a line); they are reported but do not fail, and
 * the list may only shrink. A new one fails.
 *
 *   npx tsx scripts/check-function-size.ts            check
 *   npx tsx scripts/check-function-size.ts --report   print every function over the limit
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const MAX_LINES = 80
const root = path.resolve(import.meta.dirname, "..")
const baselineFile = path.join(root, "scripts/function-size-baseline.txt")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

type FunctionNode = ts.FunctionDeclaration | ts.FunctionExpression | ts.ArrowFunction | ts.MethodDeclaration

const isFunction = (node: ts.Node): node is FunctionNode =>
  ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node)

/** A readable, stable name: the declaration's, or that of the variable or property it is part of. */
const nameOf = (node: FunctionNode, file: ts.SourceFile): string => {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name !== undefined) return node.name.getText(file)
  const parts: Array<string> = []
  for (let at: ts.Node = node.parent; !ts.isSourceFile(at); at = at.parent) {
    if (ts.isCallExpression(at) && parts.length === 0) parts.push(at.expression.getText(file).slice(0, 40))
    if (ts.isVariableDeclaration(at) || ts.isPropertyAssignment(at) || ts.isFunctionDeclaration(at) || ts.isMethodDeclaration(at)) {
      if (at.name !== undefined) return [at.name.getText(file), ...parts].join(" › ")
    }
  }
  const { line } = file.getLineAndCharacterOfPosition(node.getStart(file))
  return `<anonymous at line ${line + 1}>`
}

/** Lines of `node` that hold code of its own: not blank, not only comment, not inside a nested function. */
const ownLines = (node: FunctionNode, file: ts.SourceFile): number => {
  const lines = new Set<number>()
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line
  const visit = (child: ts.Node) => {
    if (child !== node && isFunction(child)) {
      lines.add(lineOf(child.getStart(file))) // the nested function's head is this function's code
      return
    }
    if (child.getChildCount(file) === 0) {
      // A token: every line it spans is code (a multi-line template literal spans several).
      const start = lineOf(child.getStart(file))
      const end = lineOf(child.getEnd())
      for (let l = start; l <= end; l++) lines.add(l)
      return
    }
    child.getChildren(file).forEach(visit)
  }
  visit(node)
  return lines.size
}

const oversized = sourceFiles(path.join(root, "src")).flatMap((fullPath) => {
  const file = ts.createSourceFile(fullPath, fs.readFileSync(fullPath, "utf8"), ts.ScriptTarget.ES2022, true)
  const found: Array<{ readonly id: string; readonly lines: number }> = []
  const walk = (node: ts.Node) => {
    if (isFunction(node)) {
      const lines = ownLines(node, file)
      if (lines > MAX_LINES) found.push({ id: `${path.relative(root, fullPath)}:${nameOf(node, file)}`, lines })
    }
    ts.forEachChild(node, walk)
  }
  walk(file)
  return found
})

const baseline = new Set(fs.existsSync(baselineFile)
  ? fs.readFileSync(baselineFile, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))
  : [])

if (process.argv.includes("--report")) {
  for (const f of oversized) console.log(`${f.id}\t${f.lines}`)
  console.log(`${oversized.length} functions over ${MAX_LINES} lines`)
} else {
  const fresh = oversized.filter((f) => !baseline.has(f.id))
  const present = new Set(oversized.map((f) => f.id))
  const stale = [...baseline].filter((id) => !present.has(id))
  for (const f of fresh) {
    console.error(`function size: ${f.id} has ${f.lines} lines of its own code (at most ${MAX_LINES}): split it into named steps`)
  }
  for (const id of stale) console.error(`function size: ${id} is within the limit now: remove it from scripts/function-size-baseline.txt`)
  if (fresh.length > 0 || stale.length > 0) process.exit(1)
  console.log(`function size: none over ${MAX_LINES} lines but the ${baseline.size} known (scripts/function-size-baseline.txt)`)
}
