/**
 * The contact import's CSV reader (src/bulk/contacts/csv-read.ts), as its worker runs it: the caps
 * checked before csv-parse runs (at their edge and one past it), the cell budget, records that
 * quoted line breaks or CR line ends make, and what crosses to the main thread: every row as a
 * line of COPY text for the import's staging table, in chunks (the fold by address is SQL's:
 * test/bulk/contacts.test.ts).
 */
import { describe, expect, it } from "vitest"
import { type CsvReadLimits, type CsvReadResult, readCsv } from "../../src/bulk/contacts/csv-read.ts"
import { STAGE_CHUNK_BYTES } from "../../src/bulk/contacts/import-rows.ts"

const limits: CsvReadLimits = { maxColumns: 5, maxLineBytes: 40, maxValues: 12 }

/** Each read's chunks of COPY text, as the worker sent them. */
const chunksOf = new WeakMap<CsvReadResult, Array<Uint8Array>>()

const read = (csv: string, within: CsvReadLimits = limits, tags: ReadonlyArray<string> = []) => {
  const chunks: Array<Uint8Array> = []
  const result = readCsv(Buffer.from(csv), within, tags, (chunk) => chunks.push(chunk))
  chunksOf.set(result, chunks)
  return result
}

/** A field of COPY's text format as its value (`\N`: NULL). */
const field = (text: string) => text === "\\N" ? null : text.replace(/\\(.)/g, (_, c: string) => (c === "t" ? "\t" : c === "n" ? "\n" : c === "r" ? "\r" : c))

/** A text[] literal as its elements (every element quoted, as the reader writes them). */
const arrayOf = (literal: string) => literal === "{}" ? [] : [...literal.slice(1, -1).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1"))

/** The rows of a successful read as the staging table gets them from its COPY lines. */
const rowsOf = (result: CsvReadResult) => {
  if (!result.ok) throw new Error(result.message)
  const text = chunksOf.get(result)!.map((chunk) => new TextDecoder().decode(chunk)).join("")
  return text.split("\n").filter((line) => line !== "").map((line) => {
    const [, , email, , name, tags, metadata] = line.split("\t").map(field)
    return { email: email!, name, tags: arrayOf(tags!), metadata: JSON.parse(metadata!) as Record<string, unknown> }
  })
}

describe("the caps, before csv-parse runs", () => {
  it("reads a header of exactly maxColumns columns and refuses one more, naming the header", () => {
    expect(read("email,a,b,c,d\nx@example.org,1\n").ok).toBe(true)
    expect(read("email,a,b,c,d,e\nx@example.org,1\n")).toMatchObject({ ok: false, kind: "invalid", param: "header" })
    // Empty names count: they are columns all the same.
    expect(read("email,,,,,\nx@example.org\n")).toMatchObject({ ok: false, param: "header" })
  })

  it("reads a record of exactly maxLineBytes bytes and refuses one more, naming its line", () => {
    const line = (bytes: number) => `x@example.org,${"v".repeat(bytes - 14)}`
    expect(line(40)).toHaveLength(40)
    expect(read(`email,a\n${line(40)}\n`).ok).toBe(true)
    const over = read(`email,a\nfirst@example.org\n\n${line(41)}\n`)
    expect(over).toMatchObject({ ok: false, kind: "invalid" })
    expect(!over.ok && over.message).toContain("Line 4 ")
  })

  it("counts a quoted line break inside the record and ends records at CR as well as LF", () => {
    expect(read(`email,a\nx@example.org,"${"v".repeat(11)}\n${"v".repeat(12)}"\n`).ok).toBe(true)
    expect(read(`email,a\nx@example.org,"${"v".repeat(14)}\n${"v".repeat(14)}"\n`)).toMatchObject({ ok: false })
    // Old Mac line ends: every record short, none refused.
    expect(rowsOf(read("email,a\rx@example.org,1\ry@example.org,2\r"))).toHaveLength(2)
  })
})

describe("the rows", () => {
  it("reads only the columns that map to something, a named column as a metadata key", () => {
    const result = read("Email,Name,TAGS,,city\nx@example.org, Ada ,a;b,ignored,Oslo\ny@example.org,,,,\n", { ...limits, maxColumns: 10 })
    expect(result).toMatchObject({ ok: true, staged: { received: 2, staged: 2, invalidRows: 0 } })
    expect(rowsOf(result)).toEqual([
      { email: "x@example.org", name: "Ada", tags: ["a", "b"], metadata: { city: "Oslo" } },
      { email: "y@example.org", name: null, tags: [], metadata: {} }
    ])
  })

  it("keeps at most maxValues non-empty cells and refuses the body past them as a size", () => {
    // Three rows of four cells: exactly 12.
    const rows = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@example.org,N,t,v`).join("\n")
    expect(read(`email,name,tags,k\n${rows(3)}\n`).ok).toBe(true)
    expect(read(`email,name,tags,k\n${rows(3)}\nr9@example.org\n`)).toMatchObject({ ok: false, kind: "size" })
  })

  it("stages every row in chunks of STAGE_CHUNK_BYTES, the query's tags added, invalid rows counted", () => {
    const wide: CsvReadLimits = { maxColumns: 1_000, maxLineBytes: 1 << 20, maxValues: 1 << 30 }
    const many = 5_000
    const addresses = Array.from({ length: many }, (_, i) => `n${i}@example.org,t`)
    const result = read(`email,tags\n${addresses.join("\n")}\nN0@EXAMPLE.org,u\nnot-an-address,\n`, wide, ["imported", " "])
    expect(result).toMatchObject({ ok: true, staged: { received: many + 2, staged: many + 1, invalidRows: 1, invalidUnique: 1, extraTags: ["imported"] } })
    const chunks = chunksOf.get(result)!
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.every((chunk) => chunk.byteLength < 2 * STAGE_CHUNK_BYTES)).toBe(true)
    // Every row, the repeated address too (SQL folds it into its first); the query's tags on every row.
    expect(rowsOf(result)).toHaveLength(many + 1)
    expect(rowsOf(result)[0]).toMatchObject({ email: "n0@example.org", tags: ["t", "imported"] })
    expect(rowsOf(result)[many]).toMatchObject({ email: "N0@EXAMPLE.org", tags: ["u", "imported"] })
  })

  it("writes tabs, line breaks, backslashes and quotes so that COPY reads them back", () => {
    const result = read(`email,name,tags,k\nx@example.org,"a\tb\\c","q\"\"x;b\\s","l1\nl2"\n`, { ...limits, maxLineBytes: 100 })
    expect(rowsOf(result)).toEqual([{ email: "x@example.org", name: "a\tb\\c", tags: ["q\"x", "b\\s"], metadata: { k: "l1\nl2" } }])
  })

  it("reads a wide row's metadata, a column named __proto__ among its keys", () => {
    const wide: CsvReadLimits = { maxColumns: 1_000, maxLineBytes: 1 << 20, maxValues: 1 << 30 }
    const header = `email,__proto__,${Array.from({ length: 998 }, (_, i) => `k${i}`).join(",")}`
    const rows = Array.from({ length: 20 }, (_, i) => `w${i}@example.org${",x".repeat(999)}`)
    const dense = rowsOf(read(`${header}\n${rows.join("\n")}\n`, wide))
    expect(dense).toHaveLength(20)
    expect(Object.keys(dense[19]!.metadata)).toHaveLength(999)
    expect(dense[19]!.metadata).toMatchObject({ k0: "x", k997: "x" })
    expect(Object.getOwnPropertyDescriptor(dense[19]!.metadata, "__proto__")?.value).toBe("x")
  })

  it("refuses a header without an email column, an empty body and invalid CSV, with a short message", () => {
    expect(read("name\nx\n")).toMatchObject({ ok: false, kind: "invalid", message: "The CSV header row has no email column" })
    expect(read("")).toMatchObject({ ok: false, kind: "invalid" })
    const unclosed = read(`email,a\nx@example.org,"${"v".repeat(30)}`, { ...limits, maxLineBytes: 10_000 })
    expect(unclosed).toMatchObject({ ok: false, kind: "invalid" })
    expect(!unclosed.ok && unclosed.message.length).toBeLessThan(320)
  })
})
