/**
 * A key's webhook (/v1/client/keys/{id}/webhook…) and its delivery history, also reachable as
 * /v1/client/webhook-endpoints/{id}/… — a webhook endpoint's id is its key's id.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OUTCOME_EVENTS } from "../events/schema.ts"
import { Authentication } from "../http/auth.ts"
import { Conflict, Forbidden, NotFound } from "../http/errors.ts"
import { IdText, queryInt } from "../http/bounds.ts"

export const WebhookConfig = Schema.Struct({
  webhook_url: Schema.NullOr(Schema.String),
  secret_set: Schema.Boolean,
  secret_masked: Schema.NullOr(Schema.String).annotations({ description: "whsec_•••••••• and the last four characters" })
}).annotations({ identifier: "WebhookConfig" })

export const RotatedSecret = Schema.Struct({
  webhook_secret: Schema.String.annotations({ description: "The new secret, shown only here" }),
  secret_masked: Schema.String
})

export const FireResult = Schema.Struct({
  delivery_id: Schema.String,
  status: Schema.Literal("pending", "delivered", "failed"),
  http_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Int
}).annotations({ identifier: "WebhookFireResult" })

export const QueuedTest = Schema.Struct({
  event_id: Schema.String.annotations({ description: "The webhook.test event's id (the body's `id`, header X-Herald-Event-Id)" }),
  delivery_id: Schema.String.annotations({ description: "Its delivery in the history of this endpoint" }),
  status: Schema.Literal("pending"),
  webhook_url: Schema.String.annotations({ description: "Where it is going (the key's URL at delivery time is used)" })
}).annotations({ identifier: "WebhookTestQueued" })

const exampleDelivery = {
  id: "whd_2Kx9Lm4Nq7Rs1Tv3Wy5Z",
  event: OUTCOME_EVENTS.transactional.sent,
  event_id: "evt_8Hn2LpQ5rT1vW6yZ9bC4",
  status: "pending" as const,
  http_code: 503,
  attempts: 2,
  error: "HTTP 503",
  next_attempt_at: "2026-01-06T12:04:16.000Z",
  created_at: "2026-01-06T12:04:10.000Z",
  updated_at: "2026-01-06T12:04:11.000Z"
}

export const DeliveryItem = Schema.Struct({
  id: Schema.String,
  event: Schema.String,
  event_id: Schema.String,
  status: Schema.Literal("pending", "delivered", "failed"),
  http_code: Schema.NullOr(Schema.Int),
  attempts: Schema.Int,
  error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "WebhookDelivery" })

export const DeliveryDetail = Schema.Struct({
  ...DeliveryItem.fields,
  payload: Schema.Unknown,
  response_body: Schema.NullOr(Schema.String).annotations({ description: "The last answer, at most 2 KB" }),
  attempt_history: Schema.Array(Schema.Struct({
    attempted_at: Schema.String,
    duration_ms: Schema.Int,
    http_code: Schema.NullOr(Schema.Int),
    error: Schema.NullOr(Schema.String),
    response_body: Schema.NullOr(Schema.String)
  }))
}).annotations({
  identifier: "WebhookDeliveryDetail",
  examples: [{
    ...exampleDelivery,
    payload: {
      id: "evt_8Hn2LpQ5rT1vW6yZ9bC4",
      event: OUTCOME_EVENTS.transactional.sent,
      ts: "2026-01-06T12:04:10.000Z",
      app: "key_4kR2vX9mQ1sT7wZ0aB3c",
      request_id: "req_3Fj7Kq2Mv9Xs1Tz5Wd8N",
      to: ["ada@example.net"],
      subject: "Your receipt",
      message_id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N"
    },
    response_body: "Service Unavailable",
    attempt_history: [
      { attempted_at: "2026-01-06T12:04:10.000Z", duration_ms: 41, http_code: 503, error: "HTTP 503", response_body: "Service Unavailable" },
      { attempted_at: "2026-01-06T12:04:11.000Z", duration_ms: 38, http_code: 503, error: "HTTP 503", response_body: "Service Unavailable" }
    ]
  }]
})

const DeliveryList = Schema.Struct({ total: Schema.Int, items: Schema.Array(DeliveryItem) }).annotations({
  identifier: "WebhookDeliveryList",
  examples: [{ total: 1, items: [exampleDelivery] }]
})

const ListParams = Schema.Struct({
  status: Schema.optional(Schema.Literal("pending", "delivered", "failed")),
  limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
})
const KeyPath = Schema.Struct({ id: IdText })
const DeliveryPath = Schema.Struct({ id: IdText, dId: IdText })

const history = <const P extends string>(prefix: P) => ({
  list: HttpApiEndpoint.get(`${prefix}List`, `/v1/client/${prefix === "key" ? "keys" : "webhook-endpoints"}/:id${prefix === "key" ? "/webhook" : ""}/deliveries`)
    .setPath(KeyPath).setUrlParams(ListParams).addSuccess(DeliveryList).addError(NotFound).addError(Forbidden)
    .annotate(OpenApi.Summary, "The key's webhook deliveries, newest first (status filter; limit ≤ 200, offset)")
    .annotate(OpenApi.Description, "Each delivery of an event to the key's endpoint: status, the last HTTP code and error, "
      + "attempts made and the next one planned."),
  get: HttpApiEndpoint.get(`${prefix}Get`, `/v1/client/${prefix === "key" ? "keys" : "webhook-endpoints"}/:id${prefix === "key" ? "/webhook" : ""}/deliveries/:dId`)
    .setPath(DeliveryPath).addSuccess(DeliveryDetail).addError(NotFound).addError(Forbidden)
    .annotate(OpenApi.Summary, "One delivery with the payload sent and every attempt's answer (bodies as text, at most 2 KB each)"),
  retry: HttpApiEndpoint.post(`${prefix}Retry`, `/v1/client/${prefix === "key" ? "keys" : "webhook-endpoints"}/:id${prefix === "key" ? "/webhook" : ""}/deliveries/:dId/retry`)
    .setPath(DeliveryPath).addSuccess(FireResult).addError(NotFound).addError(Forbidden).addError(Conflict)
    .annotate(OpenApi.Summary, "Re-fire with the key's current URL and secret; waits for the attempt (≤ 10 s)")
    .annotate(OpenApi.Description, "One extra attempt, not a step of the retry ladder: success marks the delivery delivered; "
      + "a failure leaves its status and next scheduled attempt as they were. 409 while an attempt of it is running "
      + "or when the key has no webhook URL.")
})

const byKey = history("key")
const byEndpoint = history("endpoint")

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("get", "/v1/client/keys/:id/webhook").setPath(KeyPath).addSuccess(WebhookConfig).addError(NotFound).addError(Forbidden)
      .annotate(OpenApi.Summary, "A key's webhook: its URL and whether a secret is set")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/client/keys/:id/webhook").setPath(KeyPath).addSuccess(WebhookConfig).addError(NotFound).addError(Forbidden)
      .annotate(OpenApi.Summary, "Remove a key's webhook URL and secret")
  )
  .add(
    HttpApiEndpoint.post("rotate", "/v1/client/keys/:id/webhook/rotate-secret").setPath(KeyPath).addSuccess(RotatedSecret)
      .addError(NotFound).addError(Forbidden).annotate(OpenApi.Summary, "New secret at once; the old one stops signing")
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/client/keys/:id/webhook/test").setPath(KeyPath).addSuccess(QueuedTest, { status: 202 })
      .addError(NotFound).addError(Forbidden).addError(Conflict)
      .annotate(OpenApi.Summary, "Queue a webhook.test event; the dispatcher delivers it like any event")
      .annotate(OpenApi.Description, "202 with the queued event and delivery (follow it in the delivery history): "
        + "signed, with the same retries as every event. 409 when the key has no webhook URL.")
  )
  .add(byKey.list).add(byKey.get).add(byKey.retry)
  .add(byEndpoint.list).add(byEndpoint.get).add(byEndpoint.retry)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
{}
