/** parseBounce on small hand-made messages: the rules the corpus does not pin down on its own. */
import { describe, expect, it } from "vitest"
import { parseBounce } from "../../src/inbound/parse/bounce.ts"
import { decodeWords } from "../../src/inbound/parse/fields.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"
import type { BounceReport } from "../../src/inbound/parse/types.ts"

const parse = async (lines: ReadonlyArray<string>): Promise<BounceReport | null> => {
  const raw = Buffer.from(lines.join("\r\n"))
  return parseBounce(await readMail(raw), raw)
}

const dsn = (recipientBlocks: ReadonlyArray<string>, original: ReadonlyArray<string> = []) => [
  "From: Mail Delivery System <MAILER-DAEMON@mx.example.net>",
  "To: bounces+abc@herald.example.com",
  "Subject: Undelivered Mail Returned to Sender",
  "MIME-Version: 1.0",
  'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
  "",
  "--b1",
  "Content-Type: text/plain",
  "",
  "The mail system could not deliver your message.",
  "",
  "--b1",
  "Content-Type: message/delivery-status",
  "",
  "Reporting-MTA: dns; mx.example.net",
  "",
  ...recipientBlocks,
  "",
  "--b1",
  "Content-Type: text/rfc822-headers",
  "",
  ...original,
  "",
  "--b1--",
  ""
]

const textBounce = (subject: string, body: ReadonlyArray<string>) => [
  "From: MAILER-DAEMON@mx.example.net",
  "To: bounces+abc@herald.example.com",
  `Subject: ${subject}`,
  "",
  ...body,
  ""
]

describe("parseBounce", () => {
  it("reads the Status field without its comment and the Diagnostic-Code without its type", async () => {
    const report = await parse(
      dsn(
        [
          "Final-Recipient: rfc822; <Someone@Example.org>",
          "Action: failed",
          "Status: 5.1.1 (bad destination mailbox address)",
          "Diagnostic-Code: smtp; 550 5.1.1 <someone@example.org>: user unknown"
        ],
        ["Message-ID: <m1@herald.example.com>", "X-Herald-Message-Id: msg_123", "Subject: Hello"]
      )
    )
    expect(report).toEqual({
      recipients: [
        {
          email: "someone@example.org",
          status: "5.1.1",
          action: "failed",
          class: "hard",
          diagnostic: "550 5.1.1 <someone@example.org>: user unknown"
        }
      ],
      original: { messageId: "m1@herald.example.com", heraldMessageId: "msg_123", subject: "Hello" }
    })
  })

  it("treats a DSN that reports only deliveries as no bounce", async () => {
    const report = await parse(dsn(["Final-Recipient: rfc822; a@example.org", "Action: delivered", "Status: 2.0.0"]))
    expect(report).toBeNull()
  })

  it("derives the status from the diagnostic when the Status field is missing", async () => {
    const report = await parse(
      dsn(["Final-Recipient: rfc822; a@example.org", "Action: failed", "Diagnostic-Code: smtp; 552 mailbox full"])
    )
    expect(report?.recipients[0]).toMatchObject({ status: "5.2.2", class: "hard" })
  })

  it("gives a text rule the class of the reply code beside it", async () => {
    const report = await parse(
      textBounce("failure notice", [
        "I'm afraid I wasn't able to deliver your message to the following addresses.",
        "",
        "<full@example.org>:",
        "Remote host said: 452 Mailbox full, try later",
        "",
        "<gone@example.org>:",
        "Remote host said: 550 no such user here",
        "",
        "--- Below this line is a copy of the message.",
        "",
        "Message-ID: <m2@herald.example.com>",
        "To: full@example.org, gone@example.org, other@example.org",
        "Subject: Hi"
      ])
    )
    expect(report?.recipients.map((r) => [r.email, r.status, r.action, r.class])).toEqual([
      ["full@example.org", "4.2.2", "failed", "soft"],
      ["gone@example.org", "5.1.1", "failed", "hard"]
    ])
    expect(report?.original).toEqual({ messageId: "m2@herald.example.com", heraldMessageId: null, subject: "Hi" })
  })

  it("marks a delay warning as delayed and soft", async () => {
    const report = await parse(
      textBounce("Delivery Status Notification (Delay)", [
        "Delivery to the following recipient has been delayed:",
        "",
        "     slow@example.org",
        "",
        "Message will be retried for 2 more day(s)"
      ])
    )
    expect(report?.recipients).toEqual([
      { email: "slow@example.org", status: "4.0.0", action: "delayed", class: "soft", diagnostic: "Message will be retried for 2 more day(s)" }
    ])
  })

  it("reads an SES bounce notification wrapped in its SNS envelope", async () => {
    const notification = JSON.stringify({
      notificationType: "Bounce",
      bounce: {
        bounceType: "Transient",
        bouncedRecipients: [{ emailAddress: "Busy@Example.org", diagnosticCode: "smtp; 452 4.2.2 over quota" }]
      },
      mail: { commonHeaders: { messageId: "<m3@herald.example.com>", subject: "Yo" }, headers: [] }
    })
    const report = await parse([
      "From: no-reply@sns.amazonaws.com",
      "Subject: AWS Notification Message",
      "",
      JSON.stringify({ Type: "Notification", Message: notification }),
      ""
    ])
    expect(report).toEqual({
      recipients: [{ email: "busy@example.org", status: "4.2.2", action: "failed", class: "soft", diagnostic: "452 4.2.2 over quota" }],
      original: { messageId: "m3@herald.example.com", heraldMessageId: null, subject: "Yo" }
    })
  })

  it("does not read a person's message as a bounce, even one quoting DSN fields", async () => {
    const report = await parse([
      "From: Alice <alice@example.org>",
      "Subject: look at this",
      "",
      "bob@example.org: this bounced, see below",
      "",
      "Final-Recipient: rfc822; bob@example.org",
      "Action: failed",
      "Status: 5.1.1"
    ])
    expect(report).toBeNull()
  })

  it("does not read an auto-reply as a bounce", async () => {
    const report = await parse([
      "From: Alice <alice@example.org>",
      "Subject: Automatic reply: Hello",
      "Auto-Submitted: auto-replied",
      "",
      "I am out of the office until Monday; bob@example.org can help meanwhile."
    ])
    expect(report).toBeNull()
  })
})

describe("encoded words in the returned original's subject", () => {
  it("decodes RFC 2047 base64 and quoted-printable words, joining adjacent ones", () => {
    expect(decodeWords("=?UTF-8?B?SGVsbG8gV8O2cmxk?= =?UTF-8?Q?_und_mehr?= plain")).toBe("Hello Wörld und mehr plain")
    expect(decodeWords("=?iso-8859-1?Q?Caf=E9?=")).toBe("Café")
    expect(decodeWords("=?x-unknown-charset?B?SGk=?=")).toBe("=?x-unknown-charset?B?SGk=?=")
  })
})
