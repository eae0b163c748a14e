/**
 * Complaint forms and quirks the ARF corpus lacks, written by hand: an Outlook.com JMRP report, an
 * SES complaint inside the SNS envelope, a report forwarded as an attachment, a feedback part that
 * lost its content type, CR-only line ends; plus the feedback-type helpers and the ISP rule.
 */
import { describe, expect, it } from "vitest"
import { isComplaintFeedback, isOptOut, parseComplaint, resolveIsp } from "../../src/inbound/parse/complaint.ts"
import { readMail } from "../../src/inbound/parse/mail.ts"

const crlf = (text: string) => text.replace(/\r?\n/g, "\r\n")
const parse = async (text: string) => {
  const raw = Buffer.from(text, "utf8")
  return parseComplaint(await readMail(raw), raw)
}

const enclosed = crlf(`Received: from mta.herald.example ([192.0.2.10]) by outlook.example
To: Anna <Anna@Outlook.example>
From: News <news@herald.example>
Subject: Spring sale
Message-ID: <m-1@herald.example>
X-Herald-Message-Id: msg_123

Hello`)

const jmrp = crlf(`From: staff@hotmail.com
To: fbl@herald.example
Subject: complaint about message from 192.0.2.10
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="jmrp"

--jmrp
Content-Type: text/plain

This is an email abuse report.
--jmrp
Content-Type: message/rfc822
Content-Disposition: attachment; filename="1.eml"

X-HmXmrOriginalRecipient: <Anna@Outlook.example>
${enclosed}
--jmrp--
`)

const arfReport = (feedbackPart: string, boundary = "arf") =>
  crlf(`From: Yahoo! Mail AntiSpam Feedback <feedback@arf.mail.yahoo.com>
To: abuse@herald.example
Subject: FW: Spring sale
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="${boundary}"

--${boundary}
Content-Type: text/plain

This is an email abuse report.
--${boundary}
${feedbackPart}
--${boundary}
Content-Type: message/rfc822

${enclosed}
--${boundary}--
`)

const feedbackFields = crlf(`Feedback-Type: abuse
User-Agent: Yahoo!-Mail-Feedback/2.0
Version: 1
Original-Rcpt-To: anna@outlook.example
`)

describe("Microsoft JMRP", () => {
  it("takes the recipient from X-HmXmrOriginalRecipient and the original from the attachment", async () => {
    const r = await parse(jmrp)
    expect(r).toMatchObject({
      feedback_type: "abuse",
      isp: "Hotmail / Microsoft JMRP",
      recipients: ["anna@outlook.example"],
      original_message_id: "m-1@herald.example",
      original: { messageId: "m-1@herald.example", heraldMessageId: "msg_123", subject: "Spring sale" },
      details: { format: "jmrp" }
    })
  })

  it("is not claimed for a multipart/mixed that merely attaches a message", async () => {
    expect(await parse(jmrp.replace("X-HmXmrOriginalRecipient: <Anna@Outlook.example>\r\n", ""))).toBeNull()
  })
})

describe("ARF variants", () => {
  it("reads a report forwarded by an abuse desk as a message/rfc822 attachment", async () => {
    const forwarded = crlf(`From: desk@isp.example
To: abuse@herald.example
Subject: Fwd: complaint
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: text/plain

See attached.
--outer
Content-Type: message/rfc822

`) + arfReport(`Content-Type: message/feedback-report\r\n\r\n${feedbackFields}`) + "\r\n--outer--\r\n"
    const r = await parse(forwarded)
    expect(r).toMatchObject({
      feedback_type: "abuse",
      recipients: ["anna@outlook.example"],
      original: { heraldMessageId: "msg_123" },
      details: { format: "arf" }
    })
  })

  it("finds the feedback fields in a base64 attachment whose content type was lost (ATT00001.dat)", async () => {
    const part = `Content-Type: application/octet-stream; name="ATT00001.dat"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(feedbackFields).toString("base64")}\r\n`
    const r = await parse(arfReport(part).replace("multipart/report; report-type=feedback-report", "multipart/mixed"))
    expect(r).toMatchObject({ feedback_type: "abuse", isp: "Yahoo", recipients: ["anna@outlook.example"] })
  })

  it("reads a report whose lines end in CR alone", async () => {
    const cr = arfReport(`Content-Type: message/feedback-report\r\n\r\n${feedbackFields}`).replace(/\r\n/g, "\r")
    expect(await parse(cr)).toMatchObject({ feedback_type: "abuse", original_message_id: "m-1@herald.example" })
  })

  it("keeps not-spam and an unknown type as recorded-only feedback", async () => {
    const notSpam = feedbackFields.replace("abuse", "Not-Spam")
    const r = await parse(arfReport(`Content-Type: message/feedback-report\r\n\r\n${notSpam}`))
    expect(r?.feedback_type).toBe("not-spam")
    expect(isComplaintFeedback(r!.feedback_type) || isOptOut(r!.feedback_type)).toBe(false)
  })

  it("does not take a bounce that returns a forwarded report for a complaint", async () => {
    const dsn = crlf(`From: MAILER-DAEMON@mx.isp.example
To: abuse@herald.example
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="dsn"

--dsn
Content-Type: text/plain

Could not deliver.
--dsn
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.isp.example

Final-Recipient: rfc822; desk@isp.example
Action: failed
Status: 5.1.1
--dsn
Content-Type: message/rfc822

`) + arfReport(`Content-Type: message/feedback-report\r\n\r\n${feedbackFields}`) + "\r\n--dsn--\r\n"
    expect(await parse(dsn)).toBeNull()
  })

  it("decodes a quoted-printable feedback part", async () => {
    const qp = feedbackFields.replace("Original-Rcpt-To: anna@outlook.example", "Original-Rcpt-To: anna=40outlook.ex=\r\nample")
    const r = await parse(arfReport(`Content-Type: message/feedback-report\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${qp}`))
    expect(r?.recipients).toEqual(["anna@outlook.example"])
  })

  it("does not take a plain message that talks about Feedback-Type for a report", async () => {
    const plain = crlf(`From: someone@example.org\nTo: abuse@herald.example\nSubject: question\n\nFeedback-Type: abuse\nVersion: 1\n`)
    expect(await parse(plain)).toBeNull()
  })
})

describe("Amazon SES", () => {
  const notification = {
    notificationType: "Complaint",
    complaint: {
      complainedRecipients: [{ emailAddress: "Anna@Outlook.example" }],
      userAgent: "Yahoo!-Mail-Feedback/2.0",
      complaintFeedbackType: "abuse",
      arrivalDate: "2026-01-01T00:00:00.000Z"
    },
    mail: {
      source: "news@herald.example",
      sourceIp: "192.0.2.10",
      headers: [
        { name: "Message-ID", value: "<m-1@herald.example>" },
        { name: "X-Herald-Message-Id", value: "msg_123" }
      ],
      commonHeaders: { to: ["anna@outlook.example"], subject: "Spring sale" }
    }
  }
  const sns = (body: string) => crlf(`From: AWS Notifications <no-reply@sns.amazonaws.com>\nTo: ops@herald.example\nSubject: AWS Notification Message\nContent-Type: text/plain; charset=UTF-8\n\n${body}\n`)

  it("unwraps the SNS envelope and names the ISP that SES forwarded", async () => {
    const r = await parse(sns(JSON.stringify({ Type: "Notification", Message: JSON.stringify(notification) })))
    expect(r).toMatchObject({
      feedback_type: "abuse",
      isp: "Yahoo (forwarded by Amazon SES no-reply@sns.amazonaws.com)",
      recipients: ["anna@outlook.example"],
      original_message_id: "m-1@herald.example",
      original: { heraldMessageId: "msg_123", subject: "Spring sale" },
      details: { format: "ses", source_ip: "192.0.2.10", original_mail_from: "news@herald.example" }
    })
  })

  it("does not take an SES bounce notification for a complaint", async () => {
    expect(await parse(sns(JSON.stringify({ notificationType: "Bounce", bounce: {}, mail: {} })))).toBeNull()
  })
})

describe("feedback types", () => {
  it.each([
    ["abuse", true, false],
    ["Fraud", true, false],
    ["virus", true, false],
    ["opt-out", false, true],
    ["opt-out-list", false, true],
    ["unsubscribe", false, true],
    ["auth-failure", false, false],
    ["not-spam", false, false],
    ["other", false, false]
  ])("%s: complaint %s, opt-out %s", (type, complaint, optOut) => {
    expect([isComplaintFeedback(type), isOptOut(type)]).toEqual([complaint, optOut])
  })
})

describe("resolveIsp", () => {
  it.each([
    ["feedback@arf.mail.yahoo.com", "Yahoo!-Mail-Feedback/1.0", "Yahoo"],
    ["complaints@email-abuse.amazonses.com", "Yahoo!-Mail-Feedback/2.0", "Yahoo (forwarded by Amazon SES complaints@email-abuse.amazonses.com)"],
    ["complaints@email-abuse.amazonses.com", null, "Amazon SES"],
    ["feedbackloop@rackspacefbl.senderscore.net", "ReturnPathFBL/2.0", "Rackspace via Return Path FBL"],
    ["feedbackloop@feedback.example.org", "ReturnPathFBL/1.0", "Return Path FBL"],
    ["fbl@isp.example", "SomeAgent/1.0", "isp.example"],
    [null, null, "unknown"]
  ])("%s with %s is %s", (from, ua, name) => {
    expect(resolveIsp(from, ua)).toBe(name)
  })
})
