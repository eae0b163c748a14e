/**
 * GET /v1/client/stats: the account's mail over the last 24 hours, 7 days or 30 days as a time
 * series (the console's overview chart), with the calling key's webhook backlog and the account's
 * reputation pause, so one answer draws the overview.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Unprocessable } from "../../http/errors.ts"

export const StatsPeriod = Schema.Literal("24h", "7d", "30d").annotations({
  description: "24h: 24 hourly buckets; 7d and 30d: 7 or 30 daily buckets (UTC days). The last bucket is the current hour or day, still filling."
})
export type StatsPeriod = typeof StatsPeriod.Type

const count = (description: string) => Schema.Int.annotations({ description })

export const StatsBucket = Schema.Struct({
  start: Schema.String.annotations({ description: "The bucket's first instant (ISO 8601, UTC, on the hour or at midnight)" }),
  sent: count("Recipients accepted into the queue (one per recipient, transactional and bulk)"),
  delivered: count("Attempts the recipient's server accepted (2xx)"),
  deferred: count("Attempts deferred (4xx, timeouts): a delivery deferred twice counts twice"),
  bounced: count("Bounces: a 5xx at SMTP time or a DSN that came back (email.bounced)"),
  complained: count("Spam complaints (email.complained)"),
  failed: count("Deliveries that failed for good (retries exhausted, refused at delivery time)")
}).annotations({ identifier: "StatsBucket" })

export const Stats = Schema.Struct({
  period: StatsPeriod,
  granularity: Schema.Literal("hour", "day"),
  buckets: Schema.Array(StatsBucket).annotations({ description: "Oldest first, every bucket of the period, zeros included" }),
  webhook_backlog: Schema.Struct({
    key_id: Schema.String.annotations({ description: "The calling key: webhooks belong to keys" }),
    pending: count("Its webhook deliveries not delivered or failed yet (a first attempt or a retry to come)"),
    oldest_pending_at: Schema.NullOr(Schema.String).annotations({ description: "When the oldest of them was created" })
  }),
  reputation: Schema.Struct({
    paused: Schema.Boolean.annotations({ description: "Sending is paused for the account's bounce or complaint rate (an admin lifts it)" }),
    reason: Schema.NullOr(Schema.String)
  })
}).annotations({
  identifier: "Stats",
  examples: [{
    period: "24h",
    granularity: "hour",
    buckets: [
      { start: "2026-01-06T11:00:00.000Z", sent: 120, delivered: 117, deferred: 4, bounced: 2, complained: 0, failed: 0 },
      { start: "2026-01-06T12:00:00.000Z", sent: 35, delivered: 31, deferred: 1, bounced: 0, complained: 1, failed: 1 }
    ],
    webhook_backlog: { key_id: "key_4kR2vX9mQ1sT7wZ0aB3c", pending: 3, oldest_pending_at: "2026-01-06T12:01:07.000Z" },
    reputation: { paused: false, reason: null }
  }]
})

export class StatsGroup extends HttpApiGroup.make("stats")
  .add(
    HttpApiEndpoint.get("get", "/v1/client/stats")
      .setUrlParams(Schema.Struct({ period: Schema.optionalWith(StatsPeriod, { default: () => "24h" as const }) }))
      .addSuccess(Stats)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "The account's sent, delivered, deferred, bounced, complained and failed mail per hour (24h) or day (7d, 30d)")
      .annotate(
        OpenApi.Description,
        "Counts every key of the account. `period` is 24h (the default: 24 hourly buckets), 7d or 30d (daily buckets, UTC); "
          + "another value → 400 validation_failed. Every bucket of the period is present, zeros included; the last one is "
          + "the current hour or day. Also the calling key's webhook backlog and whether the account's sending is paused "
          + "for its reputation, and why. The RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset headers give the "
          + "calling key's headroom as a send's would, without counting this request. Read by index range scans under the request's statement timeout "
          + "(422 query_too_expensive: choose a shorter period)."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Stats")
{}
