/** `herald parse FILE`: what Herald understands of one file, as JSON, with no database at all. */
import { describe, expect, it } from "vitest"
import { runMain } from "../support/appliance.ts"

const corpus = (file: string) => new URL(`../../../shared/corpus/${file}`, import.meta.url).pathname
// No DATABASE_URL and a data directory that does not exist: any database access would fail.
const env = { HERALD_DATA_DIR: "/nonexistent/herald-parse" }

describe("herald parse", () => {
  it("prints a DSN's failed recipients with status, action, class and diagnostic", async () => {
    const res = await runMain(["parse", corpus("bounces/sisimai--lhost-postfix-02.eml")], env)
    expect(res.code).toBe(0)
    const out = JSON.parse(res.stdout)
    expect(Object.keys(out).sort()).toEqual(["bounce", "kind"])
    expect(out.kind).toBe("bounce")
    expect(out.bounce.recipients[0]).toMatchObject({ action: "failed", class: "hard" })
    expect(out.bounce.recipients[0].status).toMatch(/^5\.\d+\.\d+$/)
  })

  it("prints an ARF report's feedback type, ISP and recipients", async () => {
    const res = await runMain(["parse", corpus("arf/sisimai--arf-01.eml")], env)
    const out = JSON.parse(res.stdout)
    expect(out.kind).toBe("complaint")
    expect(Object.keys(out.complaint).sort()).toEqual(["feedback_type", "isp", "original_message_id", "recipients"])
    expect(out.complaint.feedback_type).toBe("abuse")
  })

  it("reads a bare zipped DMARC attachment", async () => {
    const res = await runMain(["parse", corpus("dmarc/tierpod--test.xml.zip")], env)
    const out = JSON.parse(res.stdout)
    expect(out.kind).toBe("dmarc")
    expect(out.dmarc[0]).toHaveProperty("report_id")
    expect(out.dmarc[0]).toHaveProperty("records")
  })

  it("names the error of an unreadable report", async () => {
    const res = await runMain(["parse", corpus("dmarc/parsedmarc--empty.xml")], env)
    const out = JSON.parse(res.stdout)
    expect(out.kind).toBe("dmarc")
    expect(out.dmarc).toEqual([])
    expect(out.error.length).toBeGreaterThan(0)
  })

  it("calls an auto-reply other", async () => {
    const res = await runMain(["parse", corpus("bounces/sisimai--rfc3834-01.eml")], env)
    expect(JSON.parse(res.stdout)).toEqual({ kind: "other" })
  })
})
