/**
 * GET /v1/mail/messages/{message_id}: one message, each recipient's state and what happened, in
 * order; …/content and …/content/html: the message as its recipient got it (content-api.ts).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { NotFound, RateLimited, Unavailable, Unprocessable } from "../../http/errors.ts"
import { IdText } from "../../http/bounds.ts"
import { HtmlParams, MessageContentView } from "./content-api.ts"

export const RecipientState = Schema.Literal("queued", "deferred", "sent", "bounced", "failed", "suppressed", "complained")
export type RecipientState = typeof RecipientState.Type

export const TimelineType = Schema.Literal("queued", "attempt", "deferred", "sent", "bounced", "failed", "complained", "opened", "clicked")
export type TimelineType = typeof TimelineType.Type

export const TimelineEntry = Schema.Struct({
  at: Schema.String,
  type: TimelineType,
  recipient: Schema.String,
  host: Schema.optional(Schema.String).annotations({ description: "attempt: the remote host that answered (MX or smarthost)" }),
  reply: Schema.optional(Schema.String).annotations({
    description: "attempt: the SMTP reply; bounced or deferred by a DSN: its diagnostic; an outcome no SMTP reply decided: the reason"
  }),
  status: Schema.optional(Schema.String).annotations({ description: "The enhanced status code (a DSN's for a late bounce)" }),
  url: Schema.optional(Schema.String).annotations({ description: "clicked: the link followed (campaign mail only, like opened)" }),
  tls_version: Schema.optional(Schema.String).annotations({
    description: "attempt: the session's TLS version (TLSv1.3, TLSv1.2…); absent when it stayed in plaintext or no session was set up"
  }),
  tls_verified: Schema.optional(Schema.Boolean).annotations({
    description: "attempt: whether the MX certificate verified for its host name (recorded since MTA-STS support)"
  }),
  mta_sts: Schema.optional(Schema.Literal("enforce", "testing")).annotations({
    description: "attempt: the recipient domain's MTA-STS policy mode that applied (RFC 8461); absent when it has none"
  })
}).annotations({ identifier: "TimelineEntry" })
export type TimelineEntry = typeof TimelineEntry.Type

export const MessageRecipient = Schema.Struct({
  email: Schema.String,
  state: RecipientState
}).annotations({ identifier: "MessageRecipient" })
export type MessageRecipient = typeof MessageRecipient.Type

/** The example the reference shows (its schema and examples.ts use this one). */
export const MESSAGE_EXAMPLE = {
  id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N",
  from: { email: "hello@example.org", name: "Example" },
  subject: "Your receipt",
  created_at: "2026-01-06T12:04:11.000Z",
  channel: "transactional",
  recipients: [{ email: "ada@example.net", state: "sent" }],
  timeline: [
    { at: "2026-01-06T12:04:11.000Z", type: "queued", recipient: "ada@example.net" },
    { at: "2026-01-06T12:04:12.000Z", type: "attempt", recipient: "ada@example.net", host: "mx1.example.net", reply: "451 4.7.1 Try again later" },
    { at: "2026-01-06T12:04:12.000Z", type: "deferred", recipient: "ada@example.net", status: "4.7.1" },
    { at: "2026-01-06T12:09:12.000Z", type: "attempt", recipient: "ada@example.net", host: "mx1.example.net", reply: "250 2.0.0 Ok: queued as 4F2A1C" },
    { at: "2026-01-06T12:09:12.000Z", type: "sent", recipient: "ada@example.net", status: "2.0.0" }
  ]
} as const

export const MessageView = Schema.Struct({
  id: Schema.String,
  from: Schema.Struct({ email: Schema.String, name: Schema.optional(Schema.String) }),
  subject: Schema.String,
  created_at: Schema.String,
  channel: Schema.Literal("transactional", "bulk"),
  recipients: Schema.Array(MessageRecipient),
  timeline: Schema.Array(TimelineEntry).annotations({ description: "Oldest first" })
}).annotations({
  identifier: "Message",
  examples: [MESSAGE_EXAMPLE]
})
export type MessageView = typeof MessageView.Type

export class MessagesGroup extends HttpApiGroup.make("messages")
  .add(
    HttpApiEndpoint.get("get", "/v1/mail/messages/:message_id")
      .setPath(Schema.Struct({ message_id: IdText }))
      .addSuccess(MessageView)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "A message of your account: each recipient's state and its timeline (queued, attempts, deferrals, the outcome, complaints)"
      )
  )
  .add(
    HttpApiEndpoint.get("content", "/v1/mail/messages/:message_id/content")
      .setPath(Schema.Struct({ message_id: IdText }))
      .addSuccess(MessageContentView)
      .addError(NotFound)
      .addError(Unprocessable)
      .addError(RateLimited)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "A message as its recipient got it: header fields, text, html and attachments (without their bytes)")
      .annotate(
        OpenApi.Description,
        "Composed again from what is stored, with the Message-ID and Date it was sent with; DKIM-Signature is not shown (it is made at "
          + "delivery and not kept). Transactional, test, confirmation, campaign and sequence mail; bulk mail only for the key that "
          + "sent it. For recipients other than the simulator's the view acts for no one: links untracked, no open pixel, confirm and "
          + "unsubscribe tokens `redacted` (in List-Unsubscribe too); for simulator recipients they stay live. Viewing records no open, "
          + "click or send. 404 `not_found` for another account's message or another key's bulk message; 422 `content_unavailable` "
          + "when the stored message cannot be composed (it did not render for its delivery either, or it is over 4 MB without its "
          + "attachments); 429 `rate_limit_exceeded` (Retry-After) when the key has two contents in preparation already; 503 "
          + "`render_busy` when every renderer is taken."
      )
  )
  .add(
    HttpApiEndpoint.get("contentHtml", "/v1/mail/messages/:message_id/content/html")
      .setPath(Schema.Struct({ message_id: IdText }))
      .setUrlParams(HtmlParams)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" })))
      .addError(NotFound)
      .addError(Unprocessable)
      .addError(RateLimited)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "A message's HTML part alone, for a sandboxed frame (links open in a new tab)")
      .annotate(
        OpenApi.Description,
        "The html of …/content, served with `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data: "
          + "cid:` (`https: http:` added to img-src with `images=1`) and `X-Content-Type-Options: nosniff`, with `<base target=\"_blank\">` "
          + "first in the document so its links open in a new tab. Meant for `<iframe sandbox=\"allow-popups "
          + "allow-popups-to-escape-sandbox\">`. 404 `not_found` also when the message has no html part."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Messages")
{}
