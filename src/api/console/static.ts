/**
 * GET /console/ and everything below it: the web console built by `npm run build:console`
 * (scripts/build-console.ts) into dist/console/ (or HERALD_CONSOLE_DIR).
 *
 * - Only the files the build's manifest lists are served, from memory, by exact name: a request
 *   path is never joined to a directory, so no `..`, encoded or not, can reach another file.
 * - Hashed assets are cached for a year (their name changes with their content); the page is
 *   `no-cache`, so an upgrade is seen at the next load.
 * - Any other path below /console/ without a file extension is a view of the console (history
 *   routing): it gets the page, which routes in the browser. A missing file with an extension
 *   (an old asset after an upgrade) is a 404, never the page served as a script.
 * - No build yet: a 503 page that says how to make one. The build is looked for again at the next
 *   request, so building while the appliance runs needs no restart; once found it is kept.
 */
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { escapeHtml } from "../../lib/html.ts"
import { DEFAULT_CONSOLE_DIR, MANIFEST_NAME } from "./manifest.ts"
import { CONSOLE_HEADERS } from "./headers.ts"

const ManifestSchema = Schema.Struct({
  index: Schema.String,
  assets: Schema.Array(Schema.Struct({ name: Schema.String, contentType: Schema.String, gzip: Schema.Boolean }))
})

interface Asset {
  readonly body: Uint8Array
  readonly gzip: Uint8Array | undefined
  readonly contentType: string
}

interface ConsoleBuild {
  readonly index: Uint8Array
  readonly assets: ReadonlyMap<string, Asset>
}

/** A year: hashed names change with their content, so a cached copy is never stale. */
const IMMUTABLE = "public, max-age=31536000, immutable"

/** The build in `dir`, or why there is none usable (no manifest, a file it lists missing). */
const loadBuild = async (dir: string): Promise<ConsoleBuild> => {
  const manifest = Schema.decodeUnknownSync(Schema.parseJson(ManifestSchema))(await readFile(path.join(dir, MANIFEST_NAME), "utf8"))
  const assets = new Map<string, Asset>()
  for (const asset of manifest.assets) {
    // The manifest is ours, but a name with a separator would still be a way out of `dir`.
    if (asset.name !== path.basename(asset.name)) throw new Error(`the manifest lists ${asset.name}, not a plain file name`)
    const body = await readFile(path.join(dir, asset.name))
    const gzip = asset.gzip ? await readFile(path.join(dir, `${asset.name}.gz`)) : undefined
    assets.set(asset.name, { body, gzip, contentType: asset.contentType })
  }
  return { index: await readFile(path.join(dir, path.basename(manifest.index))), assets }
}

const noBuildPage = (dir: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald console not built</title></head>
<body><h1>The console is not built</h1>
<p>This appliance has no built console in <code>${escapeHtml(dir)}</code>. Run
<code>npm run build:console</code> in its directory (the image and <code>npm install</code> do it for
you), then reload this page.</p>
<p>The API works without it: see <a href="/">the home page</a>.</p></body></html>
`

const accepts = (request: HttpServerRequest.HttpServerRequest, encoding: string): boolean =>
  (request.headers["accept-encoding"] ?? "").split(",").some((part) => part.trim().split(";")[0] === encoding)

const assetResponse = (asset: Asset, request: HttpServerRequest.HttpServerRequest) => {
  const gzipped = asset.gzip !== undefined && accepts(request, "gzip")
  return HttpServerResponse.uint8Array(gzipped ? asset.gzip! : asset.body, {
    contentType: asset.contentType,
    headers: {
      ...CONSOLE_HEADERS,
      "cache-control": IMMUTABLE,
      vary: "accept-encoding",
      ...(gzipped ? { "content-encoding": "gzip" } : {})
    }
  })
}

const pageResponse = (index: Uint8Array) =>
  HttpServerResponse.uint8Array(index, {
    contentType: "text/html; charset=utf-8",
    headers: { ...CONSOLE_HEADERS, "cache-control": "no-cache" }
  })

const notFound = HttpServerResponse.text("Not found\n", {
  status: 404,
  headers: { ...CONSOLE_HEADERS, "cache-control": "no-cache" }
})

/** The path below /console/ of a request URL ("" for /console/ itself). */
const pathBelowConsole = (url: string): string => {
  const pathname = url.split("?")[0] ?? ""
  return pathname.startsWith("/console/") ? pathname.slice("/console/".length) : ""
}

/** GET /console (→ /console/), /console/ and /console/* (DESIGN.md "Public paths": no key). */
export const ConsoleStaticLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const dir = path.resolve(Option.getOrElse(config.consoleDir, () => DEFAULT_CONSOLE_DIR))
    let build: ConsoleBuild | undefined
    const currentBuild = Effect.promise(async () => {
      if (build === undefined) build = await loadBuild(dir).catch(() => undefined)
      return build
    })

    const serve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // The page's relative links need the trailing slash. (The router ignores trailing slashes,
      // so /console and /console/ are one route here.)
      if ((request.url.split("?")[0] ?? "") === "/console") return HttpServerResponse.redirect("/console/", { status: 308 })
      const found = yield* currentBuild
      if (found === undefined) {
        return HttpServerResponse.text(noBuildPage(dir), {
          status: 503,
          contentType: "text/html; charset=utf-8",
          headers: { ...CONSOLE_HEADERS, "cache-control": "no-store", "retry-after": "60" }
        })
      }
      const below = pathBelowConsole(request.url)
      const asset = found.assets.get(below)
      if (asset !== undefined) return assetResponse(asset, request)
      const last = below.split("/").pop() ?? ""
      return last.includes(".") ? notFound : pageResponse(found.index)
    })

    yield* router.get("/console", serve)
    yield* router.get("/console/*", serve)
  }))
