/**
 * The contact import's CSV reader (src/bulk/contacts/csv-read.ts), as its worker runs it: the caps
 * checked before csv-parse runs (at their edge and one past it), the cell budget, records that
 * quoted line breaks or CR line ends make, and what crosses to the main thread: the gathered
 * contacts as the INSERT's batch texts.
 */
import { describe, expect, it } from "vitest"
import { type CsvReadLimits, type CsvReadResult, readCsv } from "../../src/bulk/contacts/csv-read.ts"
import { BATCH } from "../../src/bulk/contacts/import-rows.ts"

const limits: CsvReadLimits = { maxColumns: 5, maxLineBytes: 40, maxValues: 12 }
const read = (csv: string, within: CsvReadLimits = limits, tags: ReadonlyArray<string> = []) => readCsv(Buffer.from(csv), within, tags)

/** The rows of a successful read as the INSERT reads them from its batch texts. */
const rowsOf = (result: CsvReadResult) => {
  if (!result.ok) throw new Error(result.message)
  const { batches, bytes } = result.gathered
  return batches.flatMap((batch) =>
    (JSON.parse(new TextDecoder().decode(bytes.subarray(batch.start, batch.end))) as Array<{ email: string; name: string | null; tags: Array<string>; metadata: Record<string, unknown> }>)
      .map(({ email, metadata, name, tags }) => ({ email, name, tags, metadata }))
  )
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
    expect(result).toMatchObject({ ok: true, gathered: { unique: 2, valid: 2, invalidRows: 0 } })
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

  it("gathers by address into batches of BATCH rows, the query's tags added, invalid rows counted", () => {
    const wide: CsvReadLimits = { maxColumns: 1_000, maxLineBytes: 1 << 20, maxValues: 1 << 30 }
    const addresses = Array.from({ length: BATCH + 1 }, (_, i) => `n${i}@example.org,t`)
    const result = read(`email,tags\n${addresses.join("\n")}\nN0@EXAMPLE.org,u\nnot-an-address,\n`, wide, ["imported", " "])
    expect(result).toMatchObject({ ok: true, gathered: { unique: BATCH + 2, valid: BATCH + 1, invalidRows: 1, invalidUnique: 1 } })
    expect(result.ok && result.gathered.batches).toHaveLength(2)
    expect(rowsOf(result)).toHaveLength(BATCH + 1)
    // The repeated address folded into its first row, its tags merged; the query's tags on every row.
    expect(rowsOf(result)[0]).toMatchObject({ email: "n0@example.org", tags: ["t", "u", "imported"] })
    expect(rowsOf(result)[BATCH]).toMatchObject({ email: `n${BATCH}@example.org`, tags: ["t", "imported"] })
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
