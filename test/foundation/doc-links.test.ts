/**
 * The README and docs/ link to each other by relative paths and anchors: a link that points
 * nowhere (a moved section, a renamed file, a heading reworded) fails here. Anchors follow
 * GitHub's rule for headings: lower case, punctuation dropped, spaces to hyphens, a repeated
 * heading numbered -1, -2, …
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const repoRoot = path.resolve(import.meta.dirname, "../..")

const markdownFiles = (): ReadonlyArray<string> => [
  "README.md",
  "docker/README.md",
  ...fs.readdirSync(path.join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)
].filter((f) => fs.existsSync(path.join(repoRoot, f)))

/** Text outside fenced code blocks, where a link is a link. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, "")

export const anchorsOf = (text: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** Every relative link target of a file: [text](target) and ![alt](target), no scheme. */
const relativeLinks = (text: string): ReadonlyArray<string> =>
  [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))

describe("links between the README and docs/", () => {
  it("reads the README and every guide the README promises", () => {
    const files = markdownFiles()
    for (const guide of ["sending", "delivery", "inbound", "webhooks", "bulk", "operating", "configuration", "architecture", "benchmarks", "decisions"]) {
      expect(files).toContain(`docs/${guide}.md`)
    }
  })

  it.each(markdownFiles())("%s links only to files and headings that exist", (file) => {
    const text = fs.readFileSync(path.join(repoRoot, file), "utf8")
    const broken = relativeLinks(text).filter((target) => {
      const [pathPart, anchor] = target.split("#") as [string, string | undefined]
      const resolved = pathPart === "" ? path.join(repoRoot, file) : path.resolve(path.dirname(path.join(repoRoot, file)), pathPart)
      if (!fs.existsSync(resolved)) return true
      if (anchor === undefined || !resolved.endsWith(".md")) return false
      return !anchorsOf(fs.readFileSync(resolved, "utf8")).has(anchor)
    })
    expect(broken).toEqual([])
  })

  it("keeps the README a newcomer's page", () => {
    const lines = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8").split("\n").length
    expect(lines).toBeLessThan(260)
  })
})

describe("the anchor rule", () => {
  it("slugs headings as GitHub does and numbers repeats", () => {
    const anchors = anchorsOf("# Quick start: a first send, no DNS needed\n## Errors\n## Errors\n```\n# not a heading\n```\n")
    expect([...anchors]).toEqual(["quick-start-a-first-send-no-dns-needed", "errors", "errors-1"])
  })
})
