/**
 * The schemas of a message's content view: GET /v1/mail/messages/{id}/content (JSON) and
 * /content/html (the HTML part alone, for a sandboxed frame). See MessageContent.ts and the
 * docs/sending.md "Message content".
 */
import { Schema } from "effect"

export const ContentHeader = Schema.Struct({
  name: Schema.String,
  value: Schema.String.annotations({ description: "Unfolded, encoded words decoded" })
}).annotations({ identifier: "MessageContentHeader" })

export const ContentAttachment = Schema.Struct({
  filename: Schema.String,
  content_type: Schema.String,
  size: Schema.Int.annotations({ description: "Decoded bytes" }),
  content_id: Schema.NullOr(Schema.String).annotations({ description: "An inline attachment's Content-ID (the html's cid: reference)" })
}).annotations({ identifier: "MessageContentAttachment" })

export const MessageContentView = Schema.Struct({
  headers: Schema.Array(ContentHeader).annotations({
    description: "The header fields as sent, in order: Date and Message-ID the sent ones; DKIM-Signature left out (made at delivery, not "
      + "stored); a multipart Content-Type's boundary is the re-composed one"
  }),
  text: Schema.NullOr(Schema.String).annotations({ description: "The text/plain part; null when there is none" }),
  html: Schema.NullOr(Schema.String).annotations({ description: "The text/html part; null when there is none" }),
  attachments: Schema.Array(ContentAttachment).annotations({ description: "Without their bytes" })
}).annotations({
  identifier: "MessageContent",
  description: "The message as its recipient got it. For a recipient other than the simulator's, links are shown untracked, without "
    + "the open pixel, and the confirm and unsubscribe links' tokens read `redacted`; for simulator recipients they stay live.",
  examples: [{
    headers: [
      { name: "Content-Type", value: "multipart/alternative; boundary=\"--_NmP-0b1c2d3e4f5a6b7c-Part_1\"" },
      { name: "From", value: "Example <hello@example.org>" },
      { name: "To", value: "ada@example.net" },
      { name: "Subject", value: "Your receipt" },
      { name: "Message-ID", value: "<msg_3Fj7Kq2Mv9Xs1Tz5Wd8N@example.org>" },
      { name: "X-Herald-Message-Id", value: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N" },
      { name: "X-Herald-Channel", value: "transactional" },
      { name: "Date", value: "Tue, 06 Jan 2026 12:04:11 +0000" },
      { name: "MIME-Version", value: "1.0" }
    ],
    text: "Thank you for your order.\n",
    html: "<p>Thank you for your order.</p><img src=\"cid:logo\">",
    attachments: [
      { filename: "receipt.pdf", content_type: "application/pdf", size: 48213, content_id: null },
      { filename: "logo.png", content_type: "image/png", size: 2291, content_id: "logo" }
    ]
  }]
})
export type MessageContentView = typeof MessageContentView.Type

export const HtmlParams = Schema.Struct({
  images: Schema.optional(Schema.Literal("0", "1")).annotations({
    description: "1: remote images (https:) may load too; by default only data: and cid: images do"
  })
})
