/**
 * The console's files as the appliance serves them (src/api/console/static.ts): the page and its
 * hashed assets with the console's headers, history-routing deep links, a clear 503 while there is
 * no build, and no path reaching any file the build did not list.
 */
import { readFile } from "node:fs/promises"
import * as net from "node:net"
import * as path from "node:path"
import { mkdtemp, rm } from "node:fs/promises"
import * as os from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildConsole } from "../../scripts/build-console.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"

let app: Appliance
let dir: string

beforeAll(async () => {
  // No build in the folder yet: the first tests see the 503, then the console is built into it.
  dir = await mkdtemp(path.join(os.tmpdir(), "herald-console-static-"))
  app = await startAppliance({ env: { HERALD_CONSOLE_DIR: dir } })
})
afterAll(async () => {
  await app?.stop()
  await rm(dir, { recursive: true, force: true })
})

const get = (route: string, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}${route}`, { headers, redirect: "manual" })

/** A request line sent as written: fetch would resolve `..` before sending it. */
const rawGet = (target: string): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const url = new URL(app.baseUrl)
    const socket = net.connect(Number(url.port), url.hostname)
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      resolve({ status: Number(text.split(" ")[1]), text })
    })
    socket.write(`GET ${target} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`)
  })

const expectConsoleHeaders = (headers: Headers) => {
  const csp = headers.get("content-security-policy") ?? ""
  // Scripts from the appliance's files only: no inline script, no eval (styles may be inline for
  // the template preview's srcdoc frame, src/api/console/headers.ts).
  expect(csp.split("; ")).toContain("script-src 'self'")
  expect(csp).toContain("frame-ancestors 'none'")
  expect(csp).not.toContain("unsafe-eval")
  expect(headers.get("x-content-type-options")).toBe("nosniff")
}

describe("the console's files", () => {
  it("answers 503 with how to build it while there is no build, then serves the build made meanwhile", async () => {
    const missing = await get("/console/")
    expect(missing.status).toBe(503)
    expect(missing.headers.get("content-type")).toContain("text/html")
    expect(await missing.text()).toContain("npm run build:console")
    expectConsoleHeaders(missing.headers)

    await buildConsole(dir)
    const built = await get("/console/")
    expect(built.status).toBe(200)
  })

  it("serves the page with the console's headers, no-cache and no inline script", async () => {
    const res = await get("/console/")
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(res.headers.get("cache-control")).toBe("no-cache")
    expectConsoleHeaders(res.headers)
    const html = await res.text()
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBe(1)
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/console\/main-[A-Z0-9]+\.js"/)
      expect(body?.trim()).toBe("")
    }
    expect(html).not.toMatch(/\son[a-z]+=/i) // no inline event handlers either
  })

  it("serves each listed asset by its hashed name, typed, cached for a year, gzipped when asked", async () => {
    const manifest = JSON.parse(await readFile(path.join(dir, "manifest.json"), "utf8")) as {
      assets: Array<{ name: string; contentType: string }>
    }
    expect(manifest.assets.map((a) => path.extname(a.name)).sort()).toEqual([".css", ".js"])
    for (const asset of manifest.assets) {
      const plain = await get(`/console/${asset.name}`, { "accept-encoding": "identity" })
      expect(plain.status).toBe(200)
      expect(plain.headers.get("content-type")).toBe(asset.contentType)
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(plain.headers.get("content-encoding")).toBeNull()
      expectConsoleHeaders(plain.headers)
      expect(Buffer.from(await plain.arrayBuffer()).equals(await readFile(path.join(dir, asset.name)))).toBe(true)

      // fetch decodes gzip itself: the body is the same file, sent compressed.
      const gzipped = await get(`/console/${asset.name}`, { "accept-encoding": "gzip" })
      expect(gzipped.headers.get("content-encoding")).toBe("gzip")
      expect(gzipped.headers.get("vary")).toBe("accept-encoding")
      expect(Buffer.from(await gzipped.arrayBuffer()).equals(await readFile(path.join(dir, asset.name)))).toBe(true)
    }
  })

  it("answers a view's deep link with the page, and a missing asset with 404 (never the page as a script)", async () => {
    const index = await (await get("/console/")).text()
    for (const route of ["/console/messages", "/console/messages/msg_123/", "/console/admin?tab=queue"]) {
      const res = await get(route)
      expect(res.status, route).toBe(200)
      expect(await res.text()).toBe(index)
    }
    const redirect = await get("/console")
    expect(redirect.status).toBe(308)
    expect(redirect.headers.get("location")).toBe("/console/")

    const oldAsset = await get("/console/main-OLDHASH1.js")
    expect(oldAsset.status).toBe(404)
    expectConsoleHeaders(oldAsset.headers)
  })

  it("serves no file the build did not list, however the path is written", async () => {
    const packageJson = await readFile(path.resolve(import.meta.dirname, "../../package.json"), "utf8")
    const targets = [
      "/console/manifest.json", // in the folder, but not an asset
      `/console/${(JSON.parse(await readFile(path.join(dir, "manifest.json"), "utf8")) as { assets: Array<{ name: string }> }).assets[0]!.name}.gz`,
      "/console/../../package.json",
      "/console/..%2f..%2fpackage.json",
      "/console/%2e%2e/%2e%2e/package.json",
      "/console/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "/console/....//....//etc/passwd",
      "/console/%252e%252e/package.json",
      "/console/..\\..\\package.json"
    ]
    const index = await (await get("/console/")).text()
    for (const target of targets) {
      const res = await rawGet(target)
      // Refused, or a path without an extension taken for a view: the page, never a file.
      if (res.status === 200) expect(res.text.endsWith(`\r\n\r\n${index}`), target).toBe(true)
      else expect([400, 404], target).toContain(res.status)
      expect(res.text, target).not.toContain('"name": "herald"')
      expect(res.text, target).not.toContain("root:x:0:0")
      expect(res.text, target).not.toContain(packageJson.slice(0, 40))
    }
  })

  it("is linked from the landing page", async () => {
    const home = await (await get("/")).text()
    expect(home).toContain('href="/console/"')
  })
})
