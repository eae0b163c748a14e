/** The HTTP side of the appliance: the API, its docs, and the Node server it listens on. */
import { HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { AnalyticsHttpLive } from "../bulk/analytics/Http.ts"
import { CampaignsHttpLive } from "../bulk/campaigns/Http.ts"
import { ContactsHttpLive } from "../bulk/contacts/Http.ts"
import { ListsHttpLive } from "../bulk/lists/Http.ts"
import { SegmentsHttpLive } from "../bulk/segments/Http.ts"
import { SettingsHttpLive } from "../bulk/settings/Http.ts"
import { SequencesHttpLive } from "../bulk/sequences/Http.ts"
import { TemplatesHttpLive } from "../bulk/templates/Http.ts"
import { AuditHttpLive } from "../transactional/audit/Http.ts"
import { MessagesHttpLive } from "../transactional/messages/Http.ts"
import { StatsHttpLive } from "../transactional/stats/Http.ts"
import { AdminQueueHttpLive } from "../mta/overview/Http.ts"
import { AdminInboundHttpLive } from "../inbound/admin/Http.ts"
import { WebhooksHttpLive } from "../webhooks/Http.ts"
import { ScheduledHttpLive } from "../transactional/scheduled/Http.ts"
import { SendHttpLive } from "../transactional/send/Http.ts"
import { AdminHttpLive } from "../platform/admin/Http.ts"
import { DmarcHttpLive } from "../platform/dmarc/Http.ts"
import { DomainsHttpLive } from "../platform/domains/Http.ts"
import { KeysHttpLive } from "../platform/keys/Http.ts"
import { PlansHttpLive } from "../platform/plans/Http.ts"
import { SubscriptionsHttpLive } from "../platform/subscriptions/Http.ts"
import { AdminTicketsHttpLive, TicketsHttpLive } from "../platform/tickets/Http.ts"
import { UsageHttpLive } from "../platform/usage/Http.ts"
import { SuppressionsHttpLive } from "../platform/suppressions/Http.ts"
import { AdminBlockedDomainsHttpLive, AdminSuppressionsHttpLive } from "../platform/suppressions/AdminHttp.ts"
import { PublicPagesLive } from "../bulk/public/routes.ts"
import { HeraldApi } from "./api.ts"
import { ConsoleStaticLive } from "./console/static.ts"
import { AdminAuthenticationLive } from "../http/admin-auth.ts"
import { AuthenticationLive } from "../http/auth.ts"
import { AuthFailuresLive } from "../http/auth-failures.ts"
import { makeRouteTemplates } from "../http/route-templates.ts"
import { MetricsRoutesLive } from "./metrics/routes.ts"
import { DocsRoutesLive } from "./docs/routes.ts"
import { FrontDoorServer, openFrontDoor } from "./front-door.ts"
import { ErrorMappingLive } from "./error-mapping.ts"
import { MetaHttpLive } from "./meta/Http.ts"
import { ConsoleHttpLive } from "./console/Http.ts"
import { withMethodNotAllowed } from "../http/method-not-allowed.ts"
import { BodyBudgetService } from "../http/body-budget.ts"
import { bodyLimitLayer, requestMiddleware } from "../http/server-middleware.ts"
import { withStorableUrl } from "../http/storable-input.ts"

const ApiLive = HttpApiBuilder.api(HeraldApi).pipe(
  Layer.provide([
    MetaHttpLive,
    ConsoleHttpLive,
    SendHttpLive,
    AuditHttpLive,
    MessagesHttpLive,
    ScheduledHttpLive,
    KeysHttpLive,
    DomainsHttpLive,
    SuppressionsHttpLive,
    UsageHttpLive,
    StatsHttpLive,
    PlansHttpLive,
    SubscriptionsHttpLive,
    TicketsHttpLive,
    WebhooksHttpLive,
    DmarcHttpLive,
    AdminHttpLive,
    AdminTicketsHttpLive,
    AdminSuppressionsHttpLive,
    AdminBlockedDomainsHttpLive,
    AdminQueueHttpLive,
    AdminInboundHttpLive,
    TemplatesHttpLive,
    ContactsHttpLive,
    ListsHttpLive,
    SegmentsHttpLive,
    CampaignsHttpLive,
    AnalyticsHttpLive,
    SequencesHttpLive,
    SettingsHttpLive
  ]),
  Layer.provide(AdminAuthenticationLive),
  // The failed-authentication table is the appliance's one (the same constant as /metrics' own).
  Layer.provide(AuthenticationLive.pipe(Layer.provide(AuthFailuresLive)))
)

/** The longest path parameter the router matches (see ServeLive). */
const MAX_PATH_PARAMETER = 16 * 1024

/**
 * Like `HttpApiBuilder.serve`, but the request middleware wraps the finished app *before* the
 * server writes the response: a middleware given to `HttpServer.serve` runs after the response
 * is already on the wire, too late to add headers or to turn a defect into the 500 envelope.
 */
const ServeLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    // The router's default of 100 characters per path parameter is shorter than a public page's
    // token (`/u/<token>`), and a longer one matches no route at all (the API's JSON 404, not the
    // page's). Node's 16 KB header limit bounds the URL; each handler refuses what is too long for it.
    const app = yield* HttpApiBuilder.httpApp.pipe(HttpRouter.withRouterConfig({ maxParamLength: MAX_PATH_PARAMETER }))
    // Read after httpApp, which completes the router: every group's and document's route is in it.
    const router = yield* HttpApiBuilder.Router.router
    const policy = {
      maxJsonBytes: config.maxJsonBytes,
      maxBodyBytes: config.httpMaxBodyBytes,
      minBytesPerSecond: config.httpMinUploadBytesPerSecond,
      graceMs: config.httpUploadGraceMs
    }
    // No request span (tracing is off, appliance.ts): the platform's tracer middleware would still
    // parse each request's URL and redact its headers before finding that out.
    // NUL and lone surrogates in a path or query are refused before routing (storable-input.ts).
    const served = withStorableUrl(router.routes, withMethodNotAllowed(router.routes, app))
    // The HTTP metrics' route label: the template of the router's routes, never the raw path.
    const routeOf = makeRouteTemplates(router.routes)
    // The process's one body budget: SMTP submission's messages take room in it too.
    const budget = yield* BodyBudgetService
    return HttpServer.serve(requestMiddleware(policy, routeOf, budget)(served)).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(bodyLimitLayer(config.httpMaxBodyBytes))
    )
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))

/** How long shutdown waits for open connections before cutting them (stalled clients, keep-alive). */
const SHUTDOWN_GRACE_MS = 5_000

/**
 * The Node server, owned here so shutdown can end connections: `server.close()` alone waits for
 * every open socket, and a client that stalls mid-request would hold the appliance up forever.
 * The cutting layer is built after the server, so its finalizer runs before the server's close:
 * idle sockets go at once, the rest after the grace period.
 */
const NodeServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = new FrontDoorServer()
    const frontDoor = Layer.scopedDiscard(openFrontDoor(server))
    const cutConnections = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.sync(() => {
          server.closeIdleConnections()
          setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref()
        })
      )
    )
    return Layer.merge(cutConnections, frontDoor).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => server, { port: config.httpPort, host: config.httpHost }))
    )
  })
)

export const HttpLive = ServeLive.pipe(
  Layer.provide(DocsRoutesLive),
  Layer.provide(MetricsRoutesLive),
  Layer.provide(PublicPagesLive),
  Layer.provide(ConsoleStaticLive),
  Layer.provide(ErrorMappingLive),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress,
  Layer.provide(NodeServerLive)
)
