/** The reference's errors and examples for /v1/mail/messages (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { MESSAGE_EXAMPLE, type MessagesGroup } from "./Api.ts"

const HTML = "<p>Thank you for your order.</p>"

export const messagesReference: GroupReference<typeof MessagesGroup> = {
  get: {
    errors: "404 `not_found` for another account's message or another key's bulk message.",
    response: MESSAGE_EXAMPLE
  },
  // Its own description states its errors.
  content: {
    errors: "",
    response: {
      headers: [
        { name: "From", value: "Example Shop <hello@example.org>" },
        { name: "To", value: "Ada Lovelace <ada@example.org>" },
        { name: "Subject", value: "Your receipt" },
        { name: "Message-ID", value: "<msg_3Fj7Kq2Mv9Xs1Tz5Wd8N@herald.example.org>" }
      ],
      text: "Thank you for your order.",
      html: HTML,
      attachments: [{ filename: "receipt.pdf", content_type: "application/pdf", size: 48213, content_id: null }]
    }
  },
  contentHtml: {
    errors: "As for …/content: 422 `content_unavailable` when the stored message cannot be composed, 429 `rate_limit_exceeded` "
      + "(Retry-After) when the key has two contents in preparation already, 503 `render_busy` when every renderer is taken.",
    response: `<base target="_blank">${HTML}`
  }
}
