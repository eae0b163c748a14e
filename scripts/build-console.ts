/**
 * Builds the web console (console/) into dist/console/: one minified script and one stylesheet
 * with content-hashed names (so the appliance can cache them for a year), a gzip copy of each,
 * index.html referencing them (no inline script: the console's CSP forbids it), and
 * manifest.json listing every file the appliance may serve (src/api/console/static.ts serves
 * nothing else, so no path can reach outside the build).
 *
 *   npm run build:console            # into dist/console/
 *   tsx scripts/build-console.ts DIR # into DIR (tests build into a temporary folder)
 *
 * Runs at install time and in the image's build stage, never at start (#28).
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { build } from "esbuild"
import { type ConsoleManifest, DEFAULT_CONSOLE_DIR, MANIFEST_NAME } from "../src/api/console/manifest.ts"

const repoRoot = path.resolve(import.meta.dirname, "..")

/** #28: a first load under 200 KB of compressed script. The build fails above it. */
const MAX_SCRIPT_GZIP_BYTES = 200 * 1024

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8"
}

export interface BuildResult {
  readonly outDir: string
  readonly scriptBytes: number
  readonly scriptGzipBytes: number
  readonly styleGzipBytes: number
}

export const buildConsole = async (outDir: string = DEFAULT_CONSOLE_DIR): Promise<BuildResult> => {
  const result = await build({
    entryPoints: [path.join(repoRoot, "console", "src", "main.tsx")],
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022"],
    jsx: "automatic",
    jsxImportSource: "preact",
    entryNames: "[name]-[hash]",
    write: false,
    outdir: outDir,
    legalComments: "none",
    logLevel: "warning"
  })
  await rm(outDir, { recursive: true, force: true })
  await mkdir(outDir, { recursive: true })

  const assets: Array<ConsoleManifest["assets"][number]> = []
  let script: { name: string; bytes: number; gzipBytes: number } | undefined
  let style: { name: string; gzipBytes: number } | undefined
  for (const file of result.outputFiles) {
    const name = path.basename(file.path)
    const gzipped = gzipSync(file.contents, { level: 9 })
    await writeFile(path.join(outDir, name), file.contents)
    await writeFile(path.join(outDir, `${name}.gz`), gzipped)
    assets.push({ name, contentType: CONTENT_TYPES[path.extname(name)] ?? "application/octet-stream", gzip: true })
    if (name.endsWith(".js")) script = { name, bytes: file.contents.byteLength, gzipBytes: gzipped.byteLength }
    if (name.endsWith(".css")) style = { name, gzipBytes: gzipped.byteLength }
  }
  if (script === undefined || style === undefined) throw new Error("the console build produced no script or no stylesheet")
  if (script.gzipBytes > MAX_SCRIPT_GZIP_BYTES) {
    throw new Error(`the console's script is ${script.gzipBytes} bytes gzipped, over the ${MAX_SCRIPT_GZIP_BYTES} allowed (#28)`)
  }

  const template = await readFile(path.join(repoRoot, "console", "index.html"), "utf8")
  const index = template.replace("%STYLE%", style.name).replace("%SCRIPT%", script.name)
  await writeFile(path.join(outDir, "index.html"), index)
  const manifest: ConsoleManifest = { index: "index.html", assets }
  await writeFile(path.join(outDir, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`)
  return { outDir, scriptBytes: script.bytes, scriptGzipBytes: script.gzipBytes, styleGzipBytes: style.gzipBytes }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now()
  const built = await buildConsole(process.argv[2] === undefined ? undefined : path.resolve(process.argv[2]))
  const kb = (bytes: number) => (bytes / 1024).toFixed(1)
  console.log(
    `console built into ${path.relative(process.cwd(), built.outDir) || "."} in ${Math.round(performance.now() - started)} ms: ` +
      `script ${kb(built.scriptBytes)} KB, ${kb(built.scriptGzipBytes)} KB gzipped (limit ${kb(MAX_SCRIPT_GZIP_BYTES)} KB); ` +
      `stylesheet ${kb(built.styleGzipBytes)} KB gzipped`
  )
}
