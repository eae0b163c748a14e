/** GET /v1/mail/audit: one item per recipient delivery, filterable, JSON or CSV. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Forbidden, Unprocessable } from "../../http/errors.ts"
import { IdText, MAX_DATE_LENGTH, MAX_QUERY_TEXT_LENGTH, QueryText, queryInt } from "../../http/bounds.ts"


/**
 * A bound of the time filter. Schema.DateFromString alone lets "yesterday" through as an Invalid
 * Date, and a year past 9999 (or before 1) is a valid JavaScript date PostgreSQL cannot read: both
 * reached the query and answered 500. The string is checked before it becomes a Date, so the
 * OpenAPI document still shows a string.
 */
const DateParam = Schema.String.pipe(
  Schema.maxLength(MAX_DATE_LENGTH),
  Schema.filter((s) => {
    const year = new Date(s).getUTCFullYear()
    return (year >= 1 && year <= 9999) || "must be an ISO 8601 date-time, such as 2026-01-31T00:00:00Z"
  }, { jsonSchema: {} }),
  Schema.compose(Schema.DateFromString)
)

export const AuditParams = Schema.Struct({
  limit: Schema.optionalWith(queryInt(1, 1000), { default: () => 100 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 }),
  app: Schema.optional(IdText.annotations({ description: "Only this key's deliveries" })),
  client_id: Schema.optional(IdText.annotations({ description: "Admin only: every key of this account" })),
  event: Schema.optional(
    Schema.String.pipe(
      Schema.maxLength(MAX_QUERY_TEXT_LENGTH),
      Schema.filter((s) =>
        s.split(",").every((e) => ["sent", "failed", "queued"].includes(e.trim())) ||
        "event must be sent, failed or queued, or a comma-separated list of them"
      )
    ).annotations({ description: "sent, failed, queued, or a comma-separated list" })
  ),
  from: Schema.optional(DateParam.annotations({ description: "ISO 8601, inclusive" })),
  to: Schema.optional(DateParam.annotations({ description: "ISO 8601, inclusive" })),
  search: Schema.optional(QueryText.annotations({ description: "Case-insensitive substring of recipient or subject" })),
  message_id: Schema.optional(IdText.annotations({ description: "Only the deliveries of this message (its message_id, exactly)" })),
  sort_by: Schema.optionalWith(Schema.Literal("ts", "recipient", "subject", "event"), { default: () => "ts" as const }),
  sort_dir: Schema.optionalWith(Schema.Literal("asc", "desc"), { default: () => "desc" as const }),
  format: Schema.optionalWith(Schema.Literal("json", "csv"), { default: () => "json" as const })
})

export const AuditItem = Schema.Struct({
  id: Schema.String,
  ts: Schema.String.annotations({ description: "When the send was accepted" }),
  event: Schema.Literal("queued", "sent", "failed"),
  recipient: Schema.String,
  subject: Schema.String,
  from: Schema.String,
  message_id: Schema.String,
  request_id: Schema.String,
  app: Schema.String,
  attempts: Schema.Int,
  smtp_code: Schema.NullOr(Schema.Int),
  smtp_status: Schema.NullOr(Schema.String),
  smtp_reply: Schema.NullOr(Schema.String).annotations({ description: "The last SMTP reply (or failure reason)" }),
  updated_at: Schema.String
}).annotations({ identifier: "AuditItem" })
export type AuditItem = typeof AuditItem.Type

/** The example the reference shows (its schema and examples.ts use this one). */
export const AUDIT_PAGE_EXAMPLE = {
  total: 1,
  limit: 100,
  offset: 0,
  items: [{
    id: "dlv_7Qw2Er5Ty8Ui1Op4As6D",
    ts: "2026-01-06T12:04:11.000Z",
    event: "sent",
    recipient: "ada@example.net",
    subject: "Your receipt",
    from: "hello@example.org",
    message_id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N",
    request_id: "req_8Hn2LpQ5rT1vW6yZ9bC4",
    app: "key_4kR2vX9mQ1sT7wZ0aB3c",
    attempts: 1,
    smtp_code: 250,
    smtp_status: "2.0.0",
    smtp_reply: "250 2.0.0 Ok: queued as 4F2A1C",
    updated_at: "2026-01-06T12:04:13.000Z"
  }]
} as const

export const AuditPage = Schema.Struct({
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  items: Schema.Array(AuditItem)
}).annotations({
  identifier: "AuditPage",
  examples: [AUDIT_PAGE_EXAMPLE]
})

export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("search", "/v1/mail/audit")
      .setUrlParams(AuditParams)
      .addSuccess(AuditPage)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })))
      .addError(Forbidden)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "Audit log of sends, newest first; format=csv returns every filtered row as text/csv")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Audit")
{}
