/**
 * docs/architecture.md "Who owns which table" is kept true: every table of migrations/ has an owner there, and
 * every statement in src/ that writes a table (INSERT, UPDATE, DELETE) is in that table's owner or
 * in a known exception docs/architecture.md gives with its reason (scripts/check-table-owners.ts, which
 * `npm run check` runs too). Keys and webhooks depend one way only.
 */
import { describe, expect, it } from "vitest"
import { tableOwnerReport } from "../../scripts/check-table-owners.ts"

const { outside, sources, tables, unowned, writes } = tableOwnerReport()

describe("who owns which table (docs/architecture.md)", () => {
  it("finds the tables and the statements that write them", () => {
    expect(tables.has("deliveries")).toBe(true)
    expect(writes.some((w) => w.table === "deliveries" && w.file === "src/mta/queue/DeliveryQueue.ts")).toBe(true)
  })

  it("names an owner for every table of migrations/", () => {
    expect(unowned).toEqual([])
  })

  it("finds every write of a table in its owner or a known exception", () => {
    expect(outside.map((w) => `${w.file}: ${w.statement} ${w.table}`)).toEqual([])
  })

  it("sets a key's webhook URL and secret only in WebhookEndpoints", () => {
    const setters = sources.filter(({ text }) => /UPDATE\s+api_keys\s+SET[^`]*webhook_(url|secret)\s*=/.test(text))
    expect(setters.map((s) => s.file)).toEqual(["src/webhooks/WebhookEndpoints.ts"])
  })

  it("has keys depend on webhooks and not the other way round", () => {
    const webhooksImportingKeys = sources.filter(({ file, text }) =>
      file.startsWith("src/webhooks/") && /from\s+"[^"]*platform\/keys\//.test(text))
    expect(webhooksImportingKeys.map((s) => s.file)).toEqual([])
  })
})
