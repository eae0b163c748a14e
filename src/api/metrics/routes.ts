/**
 * Where GET /metrics is served (MetricsScrape.ts decides who may read it): on the API's router, and
 * on its own listener when HERALD_METRICS_PORT is set — a plain Node server bound to
 * HERALD_METRICS_HOST (default 127.0.0.1) that answers /metrics and 404 for every other path,
 * without the API's routes, so exposing the port to a Prometheus network exposes nothing else.
 */
import { createServer } from "node:http"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { MetricsScrape } from "./MetricsScrape.ts"

export const MetricsRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const scrape = yield* MetricsScrape
    yield* router.get("/metrics", scrape.answer("api"))
  })
)

/** Only GET (and HEAD) of /metrics, query ignored. */
const isMetricsPath = (url: string) => (url.split("?", 1)[0] ?? "").replace(/\/+$/, "") === "/metrics"

export const MetricsPortLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.metricsPort)) return
    const port = config.metricsPort.value
    const scrape = yield* MetricsScrape
    const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      (request.method === "GET" || request.method === "HEAD") && isMetricsPath(request.url)
        ? scrape.answer("metrics-port")
        : Effect.succeed(HttpServerResponse.text("Not found\n", { status: 404 })))
    const handle = yield* NodeHttpServer.makeHandler(app)
    const server = createServer(handle)
    // Idle keep-alive sockets of the scraper would hold shutdown up: cut with the listener.
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (e) => resume(Effect.fail(e)))
        server.listen(port, config.metricsHost, () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    ).pipe(Effect.orDie)
    yield* Effect.logInfo("metrics listening").pipe(Effect.annotateLogs({ host: config.metricsHost, port }))
  })
)
