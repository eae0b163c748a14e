/**
 * GET /v1/admin/inbound: what the MX listener received, newest first, and with `refused=true` only
 * the reports that changed nothing and why (admin keys only; documented with the admin routes).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminAuthentication } from "../../http/admin-auth.ts"
import { Forbidden, Unprocessable } from "../../http/errors.ts"
import { queryInt } from "../../http/bounds.ts"

export const InboundReport = Schema.Struct({
  id: Schema.String,
  received_at: Schema.String,
  processed_at: Schema.NullOr(Schema.String),
  remote_address: Schema.String.annotations({ description: "The SMTP client's IP address" }),
  helo: Schema.NullOr(Schema.String),
  mail_from: Schema.String.annotations({ description: "The envelope sender (empty for a DSN)" }),
  rcpt_to: Schema.Array(Schema.String).annotations({ description: "The envelope recipients" }),
  size: Schema.Int.annotations({ description: "Bytes received" }),
  state: Schema.Literal("received", "processed", "failed").annotations({
    description: "received: waiting for the parser; processed; failed: the parsers could not read it (parked)"
  }),
  kind: Schema.NullOr(Schema.String).annotations({ description: "bounce, complaint, dmarc or other, once parsed" }),
  authenticated_as: Schema.NullOr(Schema.String).annotations({ description: "How a feedback loop's sender was authenticated, e.g. `dkim yahoo.com`" }),
  refused: Schema.Boolean.annotations({ description: "The report changed nothing: refused for who sent it, or unreadable" }),
  reason: Schema.NullOr(Schema.String).annotations({ description: "Why it was refused (the stored refusal, or the parser's error; at most 2,000 characters)" })
}).annotations({ identifier: "InboundReport" })

export const InboundPage = Schema.Struct({
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  items: Schema.Array(InboundReport)
}).annotations({
  identifier: "InboundPage",
  examples: [{
    total: 1,
    limit: 50,
    offset: 0,
    items: [{
      id: "inb_5Tq8Wm2Lk7Xc1Vb9Nz3R",
      received_at: "2026-01-06T12:10:02.000Z",
      processed_at: "2026-01-06T12:10:03.000Z",
      remote_address: "203.0.113.9",
      helo: "mail.isp.example",
      mail_from: "feedback@isp.example",
      rcpt_to: ["fbl@bounces.herald.example"],
      size: 4211,
      state: "processed",
      kind: "complaint",
      authenticated_as: null,
      refused: true,
      reason: "not from an authenticated feedback loop: isp.example is not in config/feedback-isps.json"
    }]
  }]
})

export class AdminInboundGroup extends HttpApiGroup.make("adminInbound")
  .add(
    HttpApiEndpoint.get("list", "/v1/admin/inbound")
      .setUrlParams(Schema.Struct({
        refused: Schema.optional(Schema.Literal("true", "false").annotations({
          description: "true: only reports that changed nothing (with the reason); false: only the others; absent: all"
        })),
        limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
        offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
      }))
      .addSuccess(InboundPage)
      .addError(Forbidden)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "Inbound mail at the MX listener, newest first; refused=true: the refused reports and why")
      .annotate(
        OpenApi.Description,
        "Admin keys only. A report is refused when it changed nothing because of who sent it (a report naming deliveries "
          + "by Message-ID from an unauthenticated sender, one naming no recipient of the message, one over the per-IP "
          + "limit) or because the parsers could not read it (parked as failed). Rows are kept after the raw message is "
          + "dropped (HERALD_INBOUND_RETENTION_DAYS), so the reason outlives the bytes."
      )
  )
  .middleware(AdminAuthentication)
  .annotate(OpenApi.Title, "Admin: inbound")
{}
