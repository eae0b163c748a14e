/** Scheduled sends: GET /v1/mail/scheduled/{id}, DELETE /v1/mail/scheduled/{id} (cancel). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, NotFound } from "../../http/errors.ts"
import { IdText } from "../../http/bounds.ts"

export const ScheduledSend = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("scheduled", "released", "cancelled", "discarded"),
  send_at: Schema.String,
  message_id: Schema.String.annotations({ description: "The message_id the send gets when it is released" }),
  created_at: Schema.String,
  reason: Schema.NullOr(Schema.String).annotations({ description: "Why a send was discarded" })
}).annotations({ identifier: "ScheduledSend" })

const Id = Schema.Struct({ id: IdText })

export class ScheduledGroup extends HttpApiGroup.make("scheduled")
  .add(
    HttpApiEndpoint.get("get", "/v1/mail/scheduled/:id").setPath(Id).addSuccess(ScheduledSend).addError(NotFound)
      .annotate(OpenApi.Summary, "A scheduled send: its status, due time and message id")
  )
  .add(
    HttpApiEndpoint.del("cancel", "/v1/mail/scheduled/:id")
      .setPath(Id)
      .addSuccess(ScheduledSend)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Cancel a scheduled send that has not been released yet")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Scheduled sends")
{}
