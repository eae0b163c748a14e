/**
 * The queue's rows carry no foreign-key checks (migration 0029: they were 40 % of a campaign
 * batch's insert). What the checks guarded stays true by construction, and this keeps it so: no
 * statement in src/ deletes an account, a key, a shared content or a message — accounts are
 * suspended, keys revoked, and the queue keeps its rows — so no message or delivery can point at
 * a row that is gone.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const repoRoot = path.resolve(import.meta.dirname, "../..")
const PARENTS = ["accounts", "api_keys", "message_contents", "messages"]
/** The tables a text deletes from or truncates. */
const deletedIn = (text: string) => [...text.matchAll(/\b(?:DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)\s+([a-z_]+)/gi)].map((m) => m[1]!.toLowerCase())

const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full) : entry.name.endsWith(".ts") ? [full] : []
  })

describe("the queue's parent rows", () => {
  it("are never deleted by the appliance", () => {
    const sources = filesUnder(path.join(repoRoot, "src"))
    expect(sources.length).toBeGreaterThan(100)
    const deletes = sources.flatMap((file) =>
      deletedIn(fs.readFileSync(file, "utf8")).filter((table) => PARENTS.includes(table)).map((table) => `${path.relative(repoRoot, file)}: ${table}`))
    expect(deletes).toEqual([])
  })

  it("would be found if one were", () => {
    const probe = "yield* sql`DELETE FROM messages WHERE id = ${id}`"
    expect(deletedIn(probe)).toEqual(["messages"])
  })
})
