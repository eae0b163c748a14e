/** CSV cells: RFC 4180 quoting, and no cell a spreadsheet would run as a formula. */
import { describe, expect, it } from "vitest"
import { csvHeader, csvRow, toCsv } from "../../src/lib/csv.ts"

interface Cell {
  readonly value: string | number | null
}

const cell = (value: Cell["value"]) => csvRow<Cell>(["value"], { value }).replace(/\r\n$/, "")

describe("csv", () => {
  it.each([
    ["=", "=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""],
    ["+", "+1+cmd", "'+1+cmd"],
    ["-", "-2+3", "'-2+3"],
    ["@", "@SUM(A1)", "'@SUM(A1)"],
    ["tab", "\t=cmd", "'\t=cmd"],
    ["carriage return", "\r=cmd", "\"'\r=cmd\""]
  ])("prefixes a cell that begins with %s with a quote", (_name, value, expected) => {
    expect(cell(value)).toBe(expected)
  })

  it("leaves other cells as they are, quoting only what RFC 4180 needs", () => {
    expect(cell("550 5.1.1 no such user")).toBe("550 5.1.1 no such user")
    expect(cell("a=b")).toBe("a=b")
    expect(cell("a,b")).toBe("\"a,b\"")
    expect(cell("say \"hi\"")).toBe("\"say \"\"hi\"\"\"")
    expect(cell(250)).toBe("250")
    expect(cell(null)).toBe("")
  })

  it("joins a header and rows with CRLF", () => {
    expect(csvHeader(["a", "b"])).toBe("a,b\r\n")
    expect(toCsv<{ a: string; b: string }>(["a", "b"], [{ a: "1", b: "=2" }])).toBe("a,b\r\n1,'=2\r\n")
  })
})
