/**
 * The DMARC aggregate report parser on inputs built here: containers and their limits (bombs,
 * nesting, trailing bytes), hostile XML (XXE, entity expansion), damaged XML, schema variants, and
 * the e-mail gate. The parser never throws; every failure is a value.
 */
import { readFileSync } from "node:fs"
import { gzipSync, strToU8, Zip, ZipDeflate, zipSync } from "fflate"
import { describe, expect, it } from "vitest"
import { defaultDmarcLimits, type DmarcLimits, parseDmarcBytes, parseDmarcMail } from "../../src/inbound/parse/dmarc/index.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"

const dmarcDir = new URL("../../../shared/corpus/dmarc/", import.meta.url)

interface Shape {
  readonly root?: string
  readonly prolog?: string
  readonly org?: string
  readonly p?: string
  readonly records?: ReadonlyArray<{ readonly ip: string; readonly count: string; readonly dkim?: string }>
  readonly identifiers?: string
}

const xml = (s: Shape = {}): string => {
  const root = s.root ?? "feedback"
  const prefix = root.includes(":") ? `${root.split(":")[0]!}:` : ""
  const t = (name: string, body: string) => `<${prefix}${name}>${body}</${prefix}${name}>`
  const ids = s.identifiers ?? "identifiers"
  const records = (s.records ?? [{ ip: "192.0.2.1", count: "3" }]).map((r) =>
    t("record", t("row", t("source_ip", r.ip) + t("count", r.count) + t("policy_evaluated", t("disposition", "none") + t("dkim", r.dkim ?? "pass") + t("spf", "fail"))) + t(ids, t("header_from", "Example.COM"))),
  )
  const ns = root.includes(":") ? ` xmlns:${root.split(":")[0]!}="urn:ietf:params:xml:ns:dmarc-2.0"` : ""
  return `${s.prolog ?? '<?xml version="1.0" encoding="UTF-8"?>'}\n<${root}${ns}>` +
    t("report_metadata", t("org_name", s.org ?? "reporter.example") + t("email", "r@reporter.example") + t("report_id", "rid-1") + t("date_range", t("begin", "1700000000") + t("end", "1700086399"))) +
    t("policy_published", t("domain", "example.com") + t("p", s.p ?? "reject")) +
    records.join("") + `</${root}>\n`
}

const bytes = (text: string) => strToU8(text)
const one = (text: string | Uint8Array, limits?: DmarcLimits) => parseDmarcBytes(typeof text === "string" ? bytes(text) : text, limits)

const expectReport = (result: ReturnType<typeof parseDmarcBytes>) => {
  expect(result.errors).toEqual([])
  expect(result.reports).toHaveLength(1)
  return result.reports[0]!
}
const expectError = (result: ReturnType<typeof parseDmarcBytes>, pattern: RegExp) => {
  expect(result.reports).toEqual([])
  expect(result.errors.join("\n")).toMatch(pattern)
}

const concat = (...parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) out.set(p, at), (at += p.length)
  return out
}

describe("reading a report", () => {
  it("maps the RFC 7489 fields, lower-cases result words and header_from, sums the counts", () => {
    const report = expectReport(one(xml({ p: "Quarantine", records: [{ ip: "192.0.2.1", count: "3", dkim: "Pass" }, { ip: "2001:db8::1", count: "4", dkim: "FAIL" }] })))
    expect(report).toMatchObject({ org_name: "reporter.example", report_id: "rid-1", domain: "example.com", policy_p: "quarantine", date_begin: 1700000000, date_end: 1700086399, records: 2, messages: 7 })
    expect(report.rows).toEqual([
      { source_ip: "192.0.2.1", count: 3, disposition: "none", dkim: "pass", spf: "fail", header_from: "example.com" },
      { source_ip: "2001:db8::1", count: 4, disposition: "none", dkim: "fail", spf: "fail", header_from: "example.com" },
    ])
  })

  it("reads RFC 9990 documents under any namespace prefix, and the draft <identities>", () => {
    expect(expectReport(one(xml({ root: "dmarc:feedback" }))).messages).toBe(3)
    expect(expectReport(one(xml({ identifiers: "identities" }))).rows[0]!.header_from).toBe("example.com")
  })

  it("decodes predefined entities and character references", () => {
    expect(expectReport(one(xml({ org: "AT&amp;T &#x41;&#66; &lt;x&gt;" }))).org_name).toBe("AT&T AB <x>")
  })

  it("honours BOMs and a declared legacy encoding, and survives bad UTF-8", () => {
    expect(expectReport(one(concat(Uint8Array.of(0xef, 0xbb, 0xbf), bytes(xml())))).report_id).toBe("rid-1")
    const utf16 = Buffer.from(`\ufeff${xml({ prolog: '<?xml version="1.0" encoding="UTF-16"?>', org: "Zürich" })}`, "utf16le")
    expect(expectReport(one(utf16)).org_name).toBe("Zürich")
    const latin1 = Buffer.from(xml({ prolog: '<?xml version="1.0" encoding="ISO-8859-1"?>', org: "Société" }), "latin1")
    expect(expectReport(one(latin1)).org_name).toBe("Société")
    const broken = bytes(xml({ org: "bad\u0001byte" }).replace("\u0001", "\u00ff"))
    broken[broken.indexOf(0xc3)] = 0x91
    expect(expectReport(one(broken)).report_id).toBe("rid-1")
  })

  it("reads damaged but readable XML: stray '<' and '&' in text, junk around <feedback>", () => {
    const damaged = `<?xml version="1.0"?> <xs:schema xmlns:xs="x">\n${xml({ prolog: "", org: "AT&T <noc@att.example>" })}`
    expect(expectReport(one(damaged)).org_name).toBe("AT&T <noc@att.example>")
  })

  it("refuses XML that is not readable, naming the problem", () => {
    expectError(one(xml().slice(0, -40)), /no complete <feedback>/)
    expectError(one(xml().replace("</report_id>", "</report_idx>")), /not well-formed/)
    expectError(one("<?xml version='1.0'?><feedback/>"), /report_id/)
  })

  it("refuses a report without a required field or with an unreadable count", () => {
    expectError(one(xml().replace(/<p>.*?<\/p>/, "")), /policy_published\/p/)
    expectError(one(xml().replace("<begin>1700000000</begin>", "<begin>yesterday</begin>")), /date_range\/begin \("yesterday"\)/)
    expectError(one(xml({ records: [{ ip: "192.0.2.1", count: "-1" }] })), /record 1: row\/count/)
  })

  it("says so when the input is empty or not a DMARC report", () => {
    expectError(one(""), /empty/)
    expectError(one("<html><body>hello</body></html>"), /no DMARC aggregate report found.*without a <feedback> root/)
    expectError(one("%PDF-1.4"), /neither XML, gzip nor zip/)
  })
})

describe("hostile XML", () => {
  it("refuses an external entity (XXE) without resolving it", () => {
    const xxe = xml({ org: "&xxe;" }).replace("<feedback>", '<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<feedback>')
    const result = one(xxe)
    expectError(result, /DOCTYPE.*XXE/)
    expect(result.errors.join("")).not.toMatch(/root:/)
  })

  it("refuses billion laughs at once, also inside gzip", () => {
    const lol = ["<!ENTITY lol0 \"lol\">", ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`)].join("\n")
    const bomb = xml({ org: "&lol9;" }).replace("<feedback>", `<!DOCTYPE feedback [\n${lol}\n]>\n<feedback>`)
    // Refused from its DOCTYPE, before any expansion (no entity is ever expanded).
    expectError(one(bomb), /DOCTYPE/)
    expectError(one(gzipSync(bytes(bomb))), /gzip: .*DOCTYPE|DOCTYPE/)
  })
})

describe("containers", () => {
  it("opens gzip, gzip in gzip and zip (stored and deflated), by content", () => {
    const doc = bytes(xml())
    expectReport(one(gzipSync(doc)))
    expectReport(one(gzipSync(gzipSync(doc))))
    expectReport(one(zipSync({ "report.bin": [doc, { level: 0 }] })))
    expectReport(one(zipSync({ "x.xml.gz": gzipSync(doc) })))
  })

  it("tolerates stray bytes after a gzip member and reads multi-member gzip", () => {
    const gz = gzipSync(bytes(xml()))
    expectReport(one(concat(gz, bytes("\r\n"))))
    expectReport(one(concat(gz, bytes("trailing garbage, not a gzip header"))))
    const text = xml()
    expectReport(one(concat(gzipSync(bytes(text.slice(0, 100))), gzipSync(bytes(text.slice(100))))))
  })

  it("reports a truncated or corrupt container", () => {
    const gz = gzipSync(bytes(xml()))
    expectError(one(gz.subarray(0, gz.length - 30)), /gzip: corrupt gzip data/)
    expectError(one(gz.subarray(0, 8)), /gzip: no data/)
    const zip = zipSync({ "a.xml": bytes(xml()) })
    expectError(one(zip.subarray(0, 60)), /zip/)
  })

  it("refuses nesting deeper than four containers", () => {
    let layered: Uint8Array = bytes(xml())
    for (let i = 0; i < 4; i++) layered = gzipSync(layered)
    expectReport(one(layered))
    expectError(one(gzipSync(layered)), /nested more than 4 deep/)
  })

  it("skips zip members that are not reports, and caps the member count", () => {
    expectReport(one(zipSync({ "README.txt": bytes("hello"), "r.xml": bytes(xml()) })))
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`m${i}.xml`, bytes(xml())] as const))
    expectError(one(zipSync(many)), /more than 10 zip members/)
    expect(one(zipSync(many), { ...defaultDmarcLimits, maxZipEntries: 20 }).reports).toHaveLength(11)
  })

  it("does not take a large, repetitive but legitimate report (~100:1) for a bomb", () => {
    const text = readFileSync(new URL("parsedmarc--!large-example.com!1711897200!1711983600.xml", dmarcDir), "utf8")
    const from = text.indexOf("<record>")
    const to = text.lastIndexOf("</feedback>")
    const big = text.slice(0, from) + text.slice(from, to).repeat(3) + text.slice(to)
    expect(expectReport(one(gzipSync(bytes(big), { level: 9 }))).records).toBe(3 * 2286)
  })
})

describe("limits", () => {
  /** 4 GiB of zeros as 4 096 concatenated gzip members (RFC 1952 §2.2): 4 MB on the wire. */
  const gzipBomb = () => {
    const member = gzipSync(new Uint8Array(1024 * 1024), { level: 9 })
    const out = new Uint8Array(member.length * 4096)
    for (let i = 0; i < 4096; i++) out.set(member, i * member.length)
    return out
  }

  it("stops a gzip bomb at the ratio cap without inflating it", () => {
    // "stopped": inflation ended at the cap; the rest of the bomb was never inflated.
    expectError(one(gzipBomb()), /gzip: compression ratio exceeds 250:1 .*stopped/)
  })

  it("stops at the size cap when the ratio is allowed", () => {
    const limits = { ...defaultDmarcLimits, maxRatio: Number.POSITIVE_INFINITY }
    expectError(one(gzipBomb(), limits), /exceeds the 33554432-byte limit \(stopped\)/)
  })

  it("stops a zip bomb (one 64 MiB member) and a bomb nested in gzip", () => {
    const parts: Array<Uint8Array> = []
    const zip = new Zip((err, chunk) => {
      if (err === null) parts.push(chunk)
    })
    const entry = new ZipDeflate("report.xml", { level: 1 })
    zip.add(entry)
    const mib = new Uint8Array(1024 * 1024)
    for (let i = 0; i < 64; i++) entry.push(mib, i === 63)
    zip.end()
    const bomb = concat(...parts)
    expectError(one(bomb), /zip: compression ratio exceeds/)
    expectError(one(bomb, { ...defaultDmarcLimits, maxDecompressedBytes: 4 * 1024 * 1024, maxRatio: 1e9 }), /zip: decompressed data exceeds the 4194304-byte limit/)
    expectError(one(gzipSync(bomb)), /gzip > zip: compression ratio exceeds/)
  })

  it("charges plain XML and every layer to one budget", () => {
    const doc = bytes(xml())
    const tight = { ...defaultDmarcLimits, maxDecompressedBytes: doc.length - 1 }
    expectError(one(doc, tight), /XML of \d+ bytes exceeds/)
    expectError(one(gzipSync(doc), tight), /exceeds the \d+-byte limit/)
    expectReport(one(gzipSync(doc), { ...tight, maxDecompressedBytes: doc.length }))
  })

  it("refuses a report with more records than the limit before parsing it, and reads one at the limit", () => {
    const records = (n: number) => Array.from({ length: n }, (_, i) => ({ ip: `10.0.${i >> 8}.${i & 255}`, count: "1" }))
    const limits = { ...defaultDmarcLimits, maxRecords: 50 }
    expect(expectReport(one(gzipSync(bytes(xml({ records: records(50) }))), limits)).records).toBe(50)
    expectError(one(gzipSync(bytes(xml({ records: records(51) }))), limits), /gzip: refused: the report has more than 50 <record> elements/)
    // Under a namespace prefix too (RFC 9990).
    expectError(one(xml({ root: "dmarc:feedback", records: records(51) }), limits), /more than 50 <record> elements/)
  })

  it("refuses a report that grows its tree with stray elements instead of records", () => {
    const padded = xml().replace("</report_metadata>", `${"<extra_contact_info/>".repeat(5000)}</report_metadata>`)
    expectError(one(padded, { ...defaultDmarcLimits, maxRecords: 50 }), /more than 4200 elements/)
  })
})

describe("never throws", () => {
  it("turns truncated and bit-flipped corpus files into values", () => {
    const seeds = ["tierpod--test.xml.gz.gz", "tierpod--test.xml.zip", "parsedmarc--nice-input.xml.gz", "cry-inc--google.xml"]
    let state = 42
    const random = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff), state)
    for (const seed of seeds) {
      const original = new Uint8Array(readFileSync(new URL(seed, dmarcDir)))
      for (let cut = 0; cut <= original.length; cut += 7) {
        const result = parseDmarcBytes(original.subarray(0, cut))
        expect(result.reports.length + result.errors.length).toBeGreaterThan(0)
      }
      for (let round = 0; round < 200; round++) {
        const flipped = original.slice()
        for (let k = 0; k < 3; k++) {
          const at = random() % flipped.length
          flipped[at] = flipped[at]! ^ (1 << (random() % 8))
        }
        const result = parseDmarcBytes(flipped)
        expect(result.reports.length + result.errors.length).toBeGreaterThan(0)
      }
    }
  })
})

const b64 = (data: Uint8Array) => (Buffer.from(data).toString("base64").match(/.{1,76}/g) ?? []).join("\r\n")

interface Part {
  readonly type: string
  readonly filename?: string
  readonly body: Uint8Array
}

const mail = (subject: string, parts: ReadonlyArray<Part>, text = "See the attachment.") =>
  readMail(
    Buffer.from(
      [
        "From: reports@reporter.example",
        "To: dmarc@example.com",
        `Subject: ${subject}`,
        "MIME-Version: 1.0",
        'Content-Type: multipart/mixed; boundary="b0"',
        "",
        "--b0",
        "Content-Type: text/plain; charset=utf-8",
        "",
        text,
        ...parts.flatMap((p) => [
          "--b0",
          `Content-Type: ${p.type}${p.filename === undefined ? "" : `; name="${p.filename}"`}`,
          "Content-Transfer-Encoding: base64",
          ...(p.filename === undefined ? [] : [`Content-Disposition: attachment; filename="${p.filename}"`]),
          "",
          b64(p.body),
        ]),
        "--b0--",
        "",
      ].join("\r\n"),
    ),
  )

describe("report mails", () => {
  const subject = "Report Domain: example.com Submitter: reporter.example Report-ID: <rid-1>"

  it("reads every report attachment, whatever its type or name says", async () => {
    const m = await mail(subject, [
      { type: "application/octet-stream", filename: "a.bin", body: gzipSync(bytes(xml())) },
      { type: "text/xml", filename: "b.xml", body: bytes(xml({ org: "second" })) },
    ])
    const result = parseDmarcMail(m)
    expect(result?.errors).toEqual([])
    expect(result?.reports.map((r) => r.org_name)).toEqual(["reporter.example", "second"])
  })

  it("reads a report sent as the text body", async () => {
    const raw = `From: r@reporter.example\r\nTo: d@example.com\r\nSubject: report\r\nContent-Type: text/plain\r\n\r\n${xml()}`
    expect(parseDmarcMail(await readMail(Buffer.from(raw)))?.reports).toHaveLength(1)
  })

  it("is null for mails that carry no report, even with XML, HTML or zip attachments", async () => {
    expect(parseDmarcMail(await mail("hello", []))).toBeNull()
    const other = await mail("invoice", [
      { type: "text/html", filename: "x.html", body: bytes("<html><p>hi</p></html>") },
      { type: "application/xml", filename: "order.xml", body: bytes("<?xml version='1.0'?><order/>") },
      { type: "application/zip", filename: "docs.zip", body: zipSync({ "a.txt": bytes("text") }) },
      { type: "application/gzip", filename: "broken.gz", body: Uint8Array.of(0x1f, 0x8b, 8, 0, 1, 2, 3) },
    ])
    expect(parseDmarcMail(other)).toBeNull()
  })

  it("returns errors, not null, for a broken report attachment", async () => {
    const broken = await mail("whatever", [{ type: "text/xml", filename: "r.xml", body: bytes(xml().slice(0, 300)) }])
    const result = parseDmarcMail(broken)
    expect(result?.reports).toEqual([])
    expect(result?.errors.join("")).toMatch(/^attachment "r\.xml": input: not a readable DMARC report/)
  })

  it("reports a container that cannot be opened when the mail or file name says it is a report", async () => {
    const whole = gzipSync(bytes(xml()))
    const corrupt = whole.subarray(0, whole.length - 30)
    const bySubject = parseDmarcMail(await mail(subject, [{ type: "application/gzip", filename: "r.gz", body: corrupt }]))
    expect(bySubject?.errors.join("")).toMatch(/corrupt gzip/)
    const byName = parseDmarcMail(await mail("hi", [{ type: "application/gzip", filename: "google.com!example.com!1549929600!1550015999.xml.gz", body: corrupt }]))
    expect(byName?.errors).toHaveLength(1)
  })
})
