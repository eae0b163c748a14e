/**
 * GET /v1/admin/queue: the outbound queue by destination site, for the operator (admin keys only;
 * documented with the admin routes, left out of /docs.json). Answered from a snapshot at most
 * 15 seconds old (QueueOverview.ts), so the console may poll it at any rate.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminAuthentication } from "../../http/admin-auth.ts"
import { Forbidden, Unprocessable } from "../../http/errors.ts"
import { queryInt } from "../../http/bounds.ts"

export const QueueSite = Schema.Struct({
  site: Schema.String.annotations({
    description: "The destination: the MX host set its domains share, or `domain:<name>` for a domain not attempted yet (or behind a smarthost)"
  }),
  shaping: Schema.String.annotations({ description: "The shaping entry its limits come from (config/shaping.json): gmail, outlook, default …" }),
  queued: Schema.Int.annotations({ description: "Deliveries never tried yet (held ones of paused accounts included)" }),
  deferred: Schema.Int.annotations({ description: "Deliveries waiting for a retry after a 4xx or a timeout" }),
  oldest_due_at: Schema.NullOr(Schema.String).annotations({ description: "The earliest next attempt among them" }),
  deferrals_last_hour: Schema.Int.annotations({ description: "Attempts the site deferred in the hour before the snapshot" }),
  connections: Schema.Int.annotations({ description: "SMTP transactions to the site running now in the process that answered (its MTA actor's status)" }),
  slots_held: Schema.Int.annotations({ description: "Connection slots of the site leased by every replica, idle kept-open connections included" }),
  max_connections: Schema.Int.annotations({ description: "The site's connection cap across every replica" }),
  max_per_minute: Schema.NullOr(Schema.Int).annotations({ description: "The site's message rate cap; null: none" }),
  paused_until: Schema.NullOr(Schema.String).annotations({ description: "Set while the site is backed off after a 421 / 4.7.x" })
}).annotations({ identifier: "QueueSite" })

export const QueuePage = Schema.Struct({
  generated_at: Schema.String.annotations({ description: "When the snapshot was taken (at most 15 s before the answer)" }),
  total: Schema.Int.annotations({ description: "Sites with queued or deferred deliveries, or deferrals in the last hour" }),
  limit: Schema.Int,
  offset: Schema.Int,
  items: Schema.Array(QueueSite)
}).annotations({
  identifier: "QueuePage",
  examples: [{
    generated_at: "2026-01-06T12:04:10.000Z",
    total: 2,
    limit: 50,
    offset: 0,
    items: [{
      site: "mx:alt1.gmail-smtp-in.l.google.com,gmail-smtp-in.l.google.com",
      shaping: "gmail",
      queued: 1840,
      deferred: 12,
      oldest_due_at: "2026-01-06T12:01:00.000Z",
      deferrals_last_hour: 30,
      connections: 18,
      slots_held: 20,
      max_connections: 20,
      max_per_minute: 1200,
      paused_until: null
    }, {
      site: "domain:example.net",
      shaping: "default",
      queued: 0,
      deferred: 3,
      oldest_due_at: "2026-01-06T12:30:00.000Z",
      deferrals_last_hour: 3,
      connections: 0,
      slots_held: 0,
      max_connections: 10,
      max_per_minute: null,
      paused_until: "2026-01-06T12:06:00.000Z"
    }]
  }]
})

export class AdminQueueGroup extends HttpApiGroup.make("adminQueue")
  .add(
    HttpApiEndpoint.get("list", "/v1/admin/queue")
      .setUrlParams(Schema.Struct({
        limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
        offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
      }))
      .addSuccess(QueuePage)
      .addError(Forbidden)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "The outbound queue by destination site, most waiting first (a snapshot at most 15 s old)")
      .annotate(
        OpenApi.Description,
        "Admin keys only (403 permission_error / forbidden otherwise). Each process computes the snapshot at most once "
          + "every HERALD_ADMIN_QUEUE_SNAPSHOT_SECONDS (15 s, the most it may be), whatever the request rate; "
          + "`generated_at` says when. The snapshot holds the 10,000 sites "
          + "with the most waiting deliveries; `total` counts them all. 422 query_too_expensive when the queue could not "
          + "be counted within the statement timeout (asked again after the snapshot period)."
      )
  )
  .middleware(AdminAuthentication)
  .annotate(OpenApi.Title, "Admin: queue")
{}
