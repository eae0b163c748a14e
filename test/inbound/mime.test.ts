/**
 * The synchronous MIME walk that replaced mailparser (src/inbound/parse/mail.ts, mime/): the
 * corner cases the corpus does not cover on its own. Delimiters with transport padding, an
 * enclosed original sent as an encoded attachment, a part with only a header, the charsets
 * mailparser read differently from the platform's decoder, and the part limit beyond which a
 * message is refused (and retried, then parked) as before.
 */
import { describe, expect, it } from "vitest"
import { parseBounce } from "../../src/inbound/parse/bounce.ts"
import { parseComplaint } from "../../src/inbound/parse/complaint.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"
import { MimeLimitError } from "../../src/inbound/parse/mime/split.ts"
import { understandMessage } from "../../src/inbound/understand.ts"
import { arf, dsn } from "../support/reports.ts"

const ORIGINAL = "From: app@sender.test\r\nTo: user@rcpt.test\r\nSubject: Hello\r\nMessage-ID: <abcDEF123@sender.test>"

const message = (lines: ReadonlyArray<string>) => Buffer.from(lines.join("\r\n"))

describe("the MIME walk", () => {
  it("takes a delimiter line followed by blanks for a delimiter (RFC 2046 §5.1.1 transport padding)", () => {
    const padded = (text: string) => Buffer.from(text.replace(/^(--[a-z-]+(?:--)?)\r$/gm, "$1 \t\r"))
    const report = padded(dsn("b@bounces.test", "gone@rcpt.test", "5.1.1", ORIGINAL))
    expect(report.toString()).toContain("--dsn-boundary \t\r\n")
    expect(parseBounce(readMail(report), report)?.recipients).toMatchObject([{ email: "gone@rcpt.test", status: "5.1.1", action: "failed" }])
    const complaint = padded(arf("fbl@bounces.test", "angry@rcpt.test", ORIGINAL))
    expect(parseComplaint(readMail(complaint), complaint)).toMatchObject({ feedback_type: "abuse", original_message_id: "abcDEF123@sender.test" })
  })

  it("reads an original enclosed as a base64 attachment for the complaint parser", () => {
    const raw = message([
      "From: Feedback Loop <feedback@fbl.isp.test>",
      "To: fbl@bounces.test",
      "Subject: Complaint",
      'Content-Type: multipart/report; report-type=feedback-report; boundary="b"',
      "",
      "--b",
      "Content-Type: message/feedback-report",
      "",
      "Feedback-Type: abuse",
      "User-Agent: ISP-FBL/1.0",
      "Version: 1",
      "",
      "--b",
      "Content-Type: message/rfc822",
      "Content-Disposition: attachment; filename=original.eml",
      "Content-Transfer-Encoding: base64",
      "",
      Buffer.from(`${ORIGINAL}\r\n\r\nBody.\r\n`).toString("base64"),
      "--b--",
      ""
    ])
    expect(parseComplaint(readMail(raw), raw)).toMatchObject({
      feedback_type: "abuse",
      recipients: ["user@rcpt.test"],
      original: { messageId: "abcDEF123@sender.test", subject: "Hello" }
    })
  })

  it("keeps a part that has only a header, closed by the final delimiter", () => {
    const raw = message([
      "From: a@b.test",
      'Content-Type: multipart/mixed; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "Hello.",
      "--b",
      "Content-Type: message/delivery-status",
      "--b--",
      ""
    ])
    const mail = readMail(raw)
    expect(mail.text).toBe("Hello.")
    expect(mail.attachments.map((a) => [a.contentType, a.content.length])).toEqual([["message/delivery-status", 0]])
  })

  it("reads windows-1252 (and Latin-1, which mail means by it), ISO-2022-JP, and 8-bit text labelled ISO-2022-JP", () => {
    const text = (charset: string, body: Buffer) =>
      readMail(Buffer.concat([Buffer.from(`Content-Type: text/plain; charset=${charset}\r\n\r\n`), body])).text
    expect(text("windows-1252", Buffer.from([0x77, 0x61, 0x73, 0x6e, 0x92, 0x74]))).toBe("wasn\u2019t")
    expect(text("iso-8859-1", Buffer.from([0x93, 0x71, 0x94, 0xe9]))).toBe("\u201cq\u201d\u00e9")
    expect(text("ISO-2022-JP", Buffer.from("GyRCJWYhPCU2ITwbKEI=", "base64"))).toBe("ユーザー")
    expect(text("ISO-2022-JP", Buffer.from("送信できませんでした"))).toBe("送信できませんでした")
  })

  it("refuses a message of more than 1000 parts, as mailparser did: the attempt fails and is retried", async () => {
    const parts = Array.from({ length: 1001 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}`).join("\r\n")
    const raw = Buffer.from(`Content-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}\r\n--b--\r\n`)
    expect(() => readMail(raw)).toThrow(MimeLimitError)
    await expect(understandMessage(raw)).rejects.toThrow("Max allowed child nodes exceeded")
  })
})
