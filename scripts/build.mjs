// @ts-check
/**
 * Everything `npm install` builds (its postinstall) and the image builds in its build stage, never
 * at start: the appliance (scripts/build-server.mjs, into dist/) and the web console
 * (scripts/build-console.ts, into dist/console/). Plain JavaScript: it runs before anything
 * compiles TypeScript; the console's build is TypeScript and runs under tsx.
 *
 * The image installs its packages before it copies the sources: then there is nothing to build
 * yet, and this says so.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

if (!fs.existsSync(path.join(root, "src/main.ts"))) {
  console.log("build: no sources yet (src/main.ts); nothing to build")
} else {
  const { buildServer } = await import("./build-server.mjs")
  const started = Date.now()
  await buildServer()
  console.log(`build: the appliance into dist/ in ${Date.now() - started} ms`)
  const consoleBuild = spawnSync(process.execPath, ["--import", "tsx", path.join(root, "scripts/build-console.ts")], { cwd: root, stdio: "inherit" })
  if (consoleBuild.status !== 0) process.exit(consoleBuild.status ?? 1)
}
