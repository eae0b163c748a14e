/** The reference's errors and examples for POST /v1/mail/send (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { SendGroup } from "./Api.ts"

export const sendReference: GroupReference<typeof SendGroup> = {
  send: {
    errors: "400 `validation_failed` (with a top-level `message`; `param` names the field) for a body out of its schema, too "
      + "many recipients, an unknown simulator address, a bad send_at or an Idempotency-Key over 200 characters, "
      + "`overage_not_offered` when the send needs more than the quota left and the plan has no overage; 403 "
      + "`account_suspended`, `sending_paused`, or `domain_not_verified` for a sender domain that is not registered or not "
      + "verified; 409 `idempotency_key_reused` for an Idempotency-Key used with another body in the last 24 hours; 413 "
      + "`payload_too_large` over MAX_JSON_MB or the attachment bounds; 429 `rate_limit_exceeded` over the key's or the "
      + "account's sends per minute (RateLimit-* headers), `monthly_quota_exceeded` when the monthly quota is used up.",
    request: {
      personalizations: [
        { to: [{ email: "ada@example.org", name: "Ada Lovelace" }], subject: "Your receipt, Ada" },
        { to: ["grace@example.org"], cc: [{ email: "accounts@example.org" }] }
      ],
      from: { email: "hello@example.org", name: "Example Shop" },
      reply_to: "support@example.org",
      subject: "Your receipt",
      content: [
        { type: "text/plain", value: "Thank you for your order." },
        { type: "text/html", value: "<p>Thank you for your order.</p>" }
      ],
      send_at: "2026-12-01T09:00:00Z"
    },
    response: {
      message: "accepted",
      app: "key_4kR2vX9mQ1sT7wZ0aB3c",
      request_id: "req_8Hn2LpQ5rT1vW6yZ9bC4",
      sandbox: false,
      items: [
        { personalization_index: 0, status: "queued", message_id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N", sandbox: false },
        { personalization_index: 1, status: "queued", message_id: "msg_5Gh8Lr3Nw1Yt6Ua9Xe2P", sandbox: false }
      ],
      id: "sch_2Df5Gh8Jk1Lm4Np7Qr0S"
    }
  }
}
