/**
 * GET /: a user who opens the appliance in a browser sees its version and health, links to the
 * reference pages, /llms.txt and the first steps — plain HTML, no script, every link working.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VERSION } from "../../src/version.ts"
import type { Appliance } from "../support/appliance.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"

let app: Appliance
let served: ConsoleAppliance
beforeAll(async () => {
  // A base URL with characters HTML must escape: it appears in the first steps' commands.
  // The console is built for this file, so its link answers 200 whether or not dist/ has a build.
  served = await startConsoleAppliance({ env: { HERALD_BASE_URL: "https://mail.example.com/herald?a=1&b=\"2\"" } })
  app = served.app
})
afterAll(() => served.stop())

describe("GET /", () => {
  it("answers an HTML page with the version, the health and the first steps, without a key", async () => {
    const res = await app.request("GET", "/", { token: null })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/)
    expect(res.text).toMatch(/^<!doctype html>/)
    expect(res.text).toContain(`version <strong>${VERSION}</strong>`)
    expect(res.text).toMatch(/Health: <span class="ok">ok<\/span>/)
    expect(res.text).toContain("/v1/mail/send")
    expect(res.text).toContain("/v1/client/domains")
    expect(res.text).not.toMatch(/<script/i)
    expect(res.text).not.toMatch(/\son[a-z]+=/i)
    expect(res.text).toContain("https://mail.example.com/herald?a=1&amp;b=&quot;2&quot;/v1/mail/send")
    expect(res.text).not.toContain("b=\"2\"")
  })

  it("names the key $KEY as the README's quick start does, and wraps its commands instead of scrolling them", async () => {
    const { text } = await app.request("GET", "/", { token: null })
    expect(text).toContain("KEY=hrld_…")
    expect(text).toContain("Authorization: Bearer $KEY")
    expect(text).not.toContain("$TOKEN")
    expect(text).toMatch(/pre\{[^}]*white-space:pre-wrap/)
  })

  it("links the three reference pages and /llms.txt, and every link answers 200", async () => {
    const { text } = await app.request("GET", "/", { token: null })
    const hrefs = [...text.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!)
    expect(hrefs).toEqual(expect.arrayContaining([
      "/reference/transactional/",
      "/reference/bulk/",
      "/reference/platform/",
      "/llms.txt",
      "/console/"
    ]))
    for (const href of hrefs) {
      expect((await app.request("GET", href, { token: null })).status, href).toBe(200)
    }
  })
})
