/**
 * Parse failures that will always fail are parked at once, not retried: a gzipped DMARC report
 * with more records than HERALD_DMARC_MAX_RECORDS (lowered here so that the report stays small) is
 * refused unparsed and parked `failed` after one attempt with a clear error, and a message the
 * MIME parser refuses the same; the parse worker lives on and the next report is processed.
 */
import { gzipSync } from "fflate"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { dmarcMail, dmarcXml } from "../support/reports.ts"
import { sendRaw } from "../support/smtp-client.ts"

const TO = "dmarc@bounces.herald.test"
let app: Appliance

beforeAll(async () => {
  app = await startAppliance({ env: { HERALD_DMARC_MAX_RECORDS: "50", HERALD_PARSE_WORKERS: "1" } })
})
afterAll(async () => {
  await app.stop()
})

const rows = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ ip: `198.51.100.${i % 250}`, count: 1 + i, dkim: "pass" as const, spf: "fail" as const }))

/** A report mail with its XML gzipped (`.xml.gz`), as several receivers send it. */
const gzippedReportMail = (id: string, records: number) => {
  const gz = Buffer.from(gzipSync(new TextEncoder().encode(dmarcXml("example.com", id, 1_700_000_000, 1_700_086_399, rows(records)))))
  return [
    "From: noreply-dmarc@receiver.test",
    `To: ${TO}`,
    `Subject: Report Domain: example.com Report-ID: ${id}`,
    "MIME-Version: 1.0",
    `Content-Type: application/gzip; name="receiver.test!example.com!1700000000!1700086399.xml.gz"`,
    "Content-Transfer-Encoding: base64",
    `Content-Disposition: attachment; filename="receiver.test!example.com!1700000000!1700086399.xml.gz"`,
    "",
    gz.toString("base64").replace(/.{76}/g, "$&\r\n"),
    ""
  ].join("\r\n")
}

const tooManyParts = () => {
  const parts = Array.from({ length: 1001 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}`).join("\r\n")
  return `Subject: many parts\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}\r\n--b--\r\n`
}

const send = async (raw: string) => {
  const reply = await sendRaw(app.smtpPort, { from: "noreply-dmarc@receiver.test", to: [TO] }, raw)
  expect(reply.code).toBe(250)
  return /queued as (\S+)/.exec(reply.text)![1]!
}

type Row = { state: string; attempts: number; error: string | null; kind: string | null; raw: Buffer | null }
const settled = (id: string) =>
  eventually(async () => {
    const [row] = await query<Row>(app.databaseUrl, "SELECT state, attempts, error, kind, raw FROM inbound_messages WHERE id = $1", [id])
    return row !== undefined && (row.state !== "received" || row.attempts > 0) ? row : undefined
  }, `message ${id} to be handled`, 30_000)

describe("parse failures that will always fail", () => {
  it("parks a DMARC report over the record limit at once, and processes the next report", async () => {
    const over = await send(gzippedReportMail("too-many-records", 51))
    const parked = await settled(over)
    expect(parked).toMatchObject({ state: "failed", attempts: 1, kind: "dmarc" })
    expect(parked.error).toMatch(/gzip: refused: the report has more than 50 <record> elements/)
    expect(parked.raw).not.toBeNull()

    const fine = await send(dmarcMail(TO, "within-limit", dmarcXml("example.com", "within-limit", 1_700_000_000, 1_700_086_399, rows(50))))
    const processed = await settled(fine)
    expect(processed).toMatchObject({ state: "processed", attempts: 1, kind: "dmarc", error: null })
  }, 60_000)

  it("parks a message the MIME parser refuses at once, with the parser's error", async () => {
    const id = await send(tooManyParts())
    const parked = await settled(id)
    expect(parked).toMatchObject({ state: "failed", attempts: 1 })
    expect(parked.error).toContain("Max allowed child nodes exceeded")
  }, 60_000)
})
