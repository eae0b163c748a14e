/**
 * The contact import's CSV reader (src/bulk/contacts/csv-read.ts), as its worker runs it: the caps
 * checked before csv-parse runs (at their edge and one past it), the cell budget, records that
 * quoted line breaks or CR line ends make, and what crosses to the main thread.
 */
import { describe, expect, it } from "vitest"
import { CHUNK_ROWS, CHUNK_VALUES, type CsvReadLimits, type CsvReadResult, readCsv } from "../../src/bulk/contacts/csv-read.ts"

const limits: CsvReadLimits = { maxColumns: 5, maxLineBytes: 40, maxValues: 12 }
const read = (csv: string, within: CsvReadLimits = limits) => readCsv(Buffer.from(csv), within)

/** The rows of a successful read, metadata rebuilt as the main thread rebuilds it. */
const rowsOf = (result: CsvReadResult) => {
  if (!result.ok) throw new Error(result.message)
  return result.chunks.flatMap((chunk) =>
    (JSON.parse(chunk) as Array<[string, string | null, Array<string>, Array<number | string>]>).map(([email, name, tags, pairs]) => {
      const metadata: Record<string, unknown> = {}
      for (let i = 0; i < pairs.length; i += 2) metadata[result.keys[pairs[i] as number]!] = pairs[i + 1]
      return { email, name, tags, metadata }
    })
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
  it("reads only the columns that map to something and carries metadata keys once", () => {
    const result = read("Email,Name,TAGS,,city\nx@example.org, Ada ,a;b,ignored,Oslo\ny@example.org,,,,\n", { ...limits, maxColumns: 10 })
    expect(result).toMatchObject({ ok: true, keys: ["city"], rows: 2 })
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

  it("hands rows over in chunks of at most CHUNK_ROWS rows and about CHUNK_VALUES cells", () => {
    const wide: CsvReadLimits = { maxColumns: 1_000, maxLineBytes: 1 << 20, maxValues: 1 << 30 }
    const narrow = read(`email\n${Array.from({ length: CHUNK_ROWS + 1 }, (_, i) => `n${i}@example.org`).join("\n")}\n`, wide)
    expect(narrow.ok && narrow.chunks.length).toBe(2)
    const header = `email,${Array.from({ length: 999 }, (_, i) => `k${i}`).join(",")}`
    const rows = Array.from({ length: 20 }, (_, i) => `w${i}@example.org${",x".repeat(999)}`)
    const dense = read(`${header}\n${rows.join("\n")}\n`, wide)
    expect(dense.ok && dense.chunks.length).toBe(Math.ceil(20 / (CHUNK_VALUES / 1_000)))
    expect(rowsOf(dense)[19]!.metadata).toMatchObject({ k0: "x", k998: "x" })
  })

  it("refuses a header without an email column, an empty body and invalid CSV, with a short message", () => {
    expect(read("name\nx\n")).toMatchObject({ ok: false, kind: "invalid", message: "The CSV header row has no email column" })
    expect(read("")).toMatchObject({ ok: false, kind: "invalid" })
    const unclosed = read(`email,a\nx@example.org,"${"v".repeat(30)}`, { ...limits, maxLineBytes: 10_000 })
    expect(unclosed).toMatchObject({ ok: false, kind: "invalid" })
    expect(!unclosed.ok && unclosed.message.length).toBeLessThan(320)
  })
})
