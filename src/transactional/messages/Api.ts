/** GET /v1/mail/messages/{message_id}: one message, each recipient's state and what happened, in order. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { NotFound } from "../../http/errors.ts"
import { IdText } from "../../http/bounds.ts"

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
  url: Schema.optional(Schema.String).annotations({ description: "clicked: the link followed (campaign mail only, like opened)" })
}).annotations({ identifier: "TimelineEntry" })
export type TimelineEntry = typeof TimelineEntry.Type

export const MessageRecipient = Schema.Struct({
  email: Schema.String,
  state: RecipientState
}).annotations({ identifier: "MessageRecipient" })
export type MessageRecipient = typeof MessageRecipient.Type

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
  examples: [{
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
  }]
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
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Messages")
{}
