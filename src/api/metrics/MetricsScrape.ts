/**
 * GET /metrics (issue 32): the registry of src/lib/metrics.ts in Prometheus text, with the gauges
 * set at scrape time — the appliance-wide ones from the database (database-gauges.ts, cached
 * 15 s), this process's from the actors' state values (`MtaStatus.snapshot`,
 * `DispatcherStatus.snapshot`) and the database pool's counts.
 *
 * Who may read it: with HERALD_METRICS_TOKEN set, only a request bearing it, on either port
 * (compared in constant time; a wrong one answers 401 and counts as a failed authentication of
 * the address, in the table the API's bearer uses: src/http/auth-failures.ts, so an address past
 * HERALD_AUTH_FAILURES_PER_MIN gets 429 here too). Without a token, only the separate port
 * (HERALD_METRICS_PORT, bound to HERALD_METRICS_HOST) serves it; on the API port it is 404, as
 * with neither set: delivery figures by destination tell who the customers mail.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Redacted, Runtime } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../../config/app-config.ts"
import { isSupervisedWorker } from "../../config/process-share.ts"
import { poolCounts } from "../../db/database.ts"
import { AuthFailures } from "../../http/auth-failures.ts"
import { answerCollects, askSupervisor, type MetricsJson } from "../../lib/cluster-metrics.ts"
import { applianceGauges, processGauges, recordAuthFailure, registry } from "../../lib/metrics.ts"
import { MtaStatus } from "../../mta/Mta.ts"
import { DispatcherStatus } from "../../webhooks/Dispatcher.ts"
import { type DatabaseFigures, GAUGES_TTL, LANES, readDatabaseFigures, WAITING_STATES } from "./database-gauges.ts"

/** Which listener a scrape came in on: the API's port, or HERALD_METRICS_PORT's. */
export type MetricsListener = "api" | "metrics-port"

const envelope = (status: number, type: string, code: string, message: string) =>
  HttpServerResponse.unsafeJson({ error: { type, code, message } }, { status })

const notFound = envelope(404, "invalid_request_error", "not_found", "No route for GET /metrics")

/** Equal in constant time: digests of both, so neither the length nor a prefix of the token leaks. */
const sameToken = (given: string, expected: Buffer) => timingSafeEqual(createHash("sha256").update(given).digest(), expected)

const setApplianceGauges = (figures: DatabaseFigures | undefined, now: number) => {
  const g = applianceGauges
  g.databaseUp.set(figures === undefined ? 0 : 1)
  if (figures === undefined) return
  for (const state of WAITING_STATES) {
    for (const lane of LANES) g.queueDeliveries.set({ state, lane }, figures.waiting.get(`${state} ${lane}`) ?? 0)
  }
  for (const lane of LANES) g.oldestDueSeconds.set({ lane }, figures.oldestDueSeconds.get(lane) ?? 0)
  g.webhookBacklog.set(figures.webhookBacklog)
  g.webhookOldestPendingSeconds.set(figures.webhookOldestPendingSeconds)
  g.campaignsSending.set(figures.campaignsSending)
  g.campaignFanoutBacklog.set(figures.campaignFanoutBacklog)
  g.trackingBacklog.set(figures.trackingBacklog)
  g.trackingLagSeconds.set(figures.trackingLagSeconds)
  g.sequenceStepsDue.set(figures.sequenceStepsDue)
  g.snapshotAgeSeconds.set(Math.max(0, (now - figures.takenAt) / 1000))
}

export class MetricsScrape extends Effect.Service<MetricsScrape>()("herald/MetricsScrape", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const mta = yield* MtaStatus
    const dispatcher = yield* DispatcherStatus
    const failures = yield* AuthFailures
    const config = yield* AppConfig
    const expected = Option.map(config.metricsToken, (t) => createHash("sha256").update(Redacted.value(t)).digest())

    // A failed read is cached too (as `undefined`: database down) for the same 15 s, so a sick
    // database is not asked again by every scrape. Uninterruptible: scrapes share the reading.
    const databaseFigures = yield* Effect.cachedWithTTL(
      Effect.uninterruptible(
        readDatabaseFigures(sql, config.queryTimeoutMs).pipe(
          Effect.tapError((e) => Effect.logWarning("metrics: the database figures could not be read", e)),
          Effect.orElseSucceed(() => undefined)
        )
      ),
      GAUGES_TTL
    )

    const setProcessGauges = Effect.gen(function*() {
      const m = yield* mta.snapshot
      const g = processGauges
      g.mtaInHand.set({ lane: "bulk" }, m.bulkInHand)
      g.mtaInHand.set({ lane: "transactional" }, m.inHand.size - m.bulkInHand)
      let running = 0
      for (const ids of m.running.values()) running += ids.size
      g.mtaRunning.set(running)
      g.mtaBudgetBytes.set(m.budget.used)
      const d = yield* dispatcher.snapshot
      let workers = 0
      for (const lane of d.lanes.values()) workers += lane.workers
      g.webhookLanes.set(d.lanes.size)
      g.webhookWorkers.set(workers)
      const pool = poolCounts()
      g.dbPoolInUse.set({ state: "in_use" }, pool === undefined ? 0 : pool.totalCount - pool.idleCount)
      g.dbPoolInUse.set({ state: "idle" }, pool?.idleCount ?? 0)
      g.dbPoolInUse.set({ state: "waiting" }, pool?.waitingCount ?? 0)
    })

    // With several processes (HERALD_PROCESSES), this worker's registry goes to the supervisor,
    // which answers with every worker's aggregated (src/lib/cluster-metrics.ts); the other workers
    // set their own gauges when it collects theirs.
    const supervised = isSupervisedWorker()
    if (supervised) {
      const runtime = yield* Effect.runtime<never>()
      const collect = () =>
        Runtime.runPromise(runtime)(Effect.zipRight(setProcessGauges, Effect.promise(() => registry.getMetricsAsJSON() as Promise<MetricsJson>)))
      yield* Effect.acquireRelease(Effect.sync(() => answerCollects(collect)), (remove) => Effect.sync(remove))
    }

    const render = Effect.gen(function*() {
      const figures = yield* databaseFigures
      setApplianceGauges(figures, yield* Clock.currentTimeMillis)
      yield* setProcessGauges
      if (!supervised) return HttpServerResponse.text(yield* Effect.promise(() => registry.metrics()), { contentType: registry.contentType })
      const own = yield* Effect.promise(() => registry.getMetricsAsJSON() as Promise<MetricsJson>)
      return yield* Effect.tryPromise(() => askSupervisor(own)).pipe(
        Effect.map((text) => HttpServerResponse.text(text, { contentType: registry.contentType })),
        Effect.catchAll((e) =>
          Effect.as(
            Effect.logWarning("metrics: the supervisor's aggregate did not come", e),
            envelope(503, "api_error", "metrics_unavailable", "The appliance's metrics could not be gathered from its processes; retry")
          ))
      )
    })

    /** A wrong token: counted for the address (429 once it is past the limit), else 401. */
    const refuse = (address: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        recordAuthFailure("metrics")
        // Known to be throttled: 429 without a statement; else counted with every process's failures.
        const known = failures.refusedUntil(address, now)
        const window = known === undefined ? yield* Effect.orDie(failures.record(address, now)) : undefined
        const until = window === undefined ? known : window.count > failures.limit ? window.end : undefined
        if (until !== undefined) {
          return HttpServerResponse.setHeader(
            envelope(429, "rate_limit_error", "rate_limit_exceeded", "Too many failed authentications from this address (HERALD_AUTH_FAILURES_PER_MIN)"),
            "retry-after",
            String(Math.max(1, Math.ceil((until - now) / 1000)))
          )
        }
        return envelope(401, "authentication_error", "unauthorized", "GET /metrics needs its bearer token (HERALD_METRICS_TOKEN)")
      })

    /** The answer to GET /metrics on `listener`. */
    const answer = (listener: MetricsListener) =>
      Effect.gen(function*() {
        if (Option.isNone(expected)) return listener === "metrics-port" ? yield* render : notFound
        const request = yield* HttpServerRequest.HttpServerRequest
        const header = request.headers["authorization"] ?? ""
        const token = header.startsWith("Bearer ") ? header.slice(7).trim() : undefined
        if (token === undefined) {
          return HttpServerResponse.setHeader(
            envelope(401, "authentication_error", "unauthorized", "GET /metrics needs its bearer token (HERALD_METRICS_TOKEN)"),
            "www-authenticate",
            "Bearer"
          )
        }
        if (!sameToken(token, expected.value)) return yield* refuse(Option.getOrElse(request.remoteAddress, () => "unknown"))
        return yield* render
      })

    return { answer } as const
  })
}) {}
