/**
 * The appliance's Prometheus metrics (issue 32): one registry, every metric defined here with its
 * label sets bounded, and the few calls the areas make as things happen. `GET /metrics`
 * (src/api/metrics/) renders the registry; the figures read from the database and from the actors'
 * state values are set there, at scrape time.
 *
 * Hot paths (a send's acceptance, an attempt's outcome, every HTTP request) only add to a plain
 * number: a counter's labelled cells are made once (at load for fixed label sets, at first use for
 * destination sites and routes) and a call finds its cell without building a label object;
 * prom-client's own `inc(labels)` hashes its labels into a string on every call. The cells are
 * copied into the prom-client counters when a scrape collects them.
 *
 * Labels are bounded: channels, outcomes and results are closed lists; destination sites are the
 * names of config/shaping.json (`allowDestinationSites`), all others `other`; routes are the API's
 * path templates (src/http/route-templates.ts), an unknown path one label. No ids, addresses or
 * tokens ever become a label.
 *
 * Several processes (HERALD_PROCESSES): everything is in `registry`, so the supervisor gathers
 * each worker's `registry.getMetricsAsJSON()` and merges them with prom-client's
 * `AggregatorRegistry.aggregate` (src/supervisor/metrics-hub.ts); counters sum, and the
 * appliance-wide gauges read from the database carry `aggregator: "first"`: the supervisor puts
 * the scraped worker's registry first, whose figures were just read, so N workers do not report N
 * times the queue nor another worker's older reading.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client"

export const registry = new Registry()

/** Event loop lag, heap, RSS, file descriptors, GC: prom-client's process metrics, prefixed with nothing (their usual names). */
collectDefaultMetrics({ register: registry })

/** One labelled cell of a counter: `inc` adds to a number, no allocation. */
export interface CounterCell {
  readonly inc: (by?: number) => void
}

interface Cell<L extends string> extends CounterCell {
  readonly labels: Readonly<Record<L, string>>
  value: number
}

/**
 * A counter whose cells are plain numbers, copied into prom-client's counter at each collect. Every
 * cell made is exported, at 0 until it moves, so `rate()` sees the first increment.
 */
const cellCounter = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>) => {
  const cells = new Map<string, Cell<L>>()
  new Counter<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset()
      for (const cell of cells.values()) this.inc(cell.labels, cell.value)
    }
  })
  const cell = (labels: Readonly<Record<L, string>>): CounterCell => {
    const key = labelNames.map((l) => labels[l]).join("\u0000")
    let found = cells.get(key)
    if (found === undefined) {
      const made: Cell<L> = { labels, value: 0, inc: (by = 1) => void (made.value += by) }
      cells.set(key, made)
      found = made
    }
    return found
  }
  return { cell }
}

/** Every combination of fixed label values, made once: `table[a][b]` is a cell. */
const grid2 = <A extends string, B extends string>(
  counter: { readonly cell: (labels: Record<string, string>) => CounterCell },
  names: readonly [string, string],
  as: ReadonlyArray<A>,
  bs: ReadonlyArray<B>
): Readonly<Record<A, Readonly<Record<B, CounterCell>>>> =>
  Object.fromEntries(as.map((a) => [a, Object.fromEntries(bs.map((b) => [b, counter.cell({ [names[0]]: a, [names[1]]: b })]))])) as never

/** One labelled cell of a histogram: `observe` counts into its bucket, no allocation. */
export interface HistogramCell {
  readonly observe: (value: number) => void
}

/**
 * A histogram whose cells are arrays of bucket counts, exported in prom-client's metric format (a
 * registered metric is anything with `get()`; the registry and `AggregatorRegistry` read only
 * that). prom-client's own `observe` allocates a closure and a label object and hashes the labels
 * on every call: measured 8 µs a call on the loaded test machine, against 0.1 µs for a cell.
 */
const cellHistogram = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>, buckets: ReadonlyArray<number>) => {
  const cells = new Map<string, { labels: Readonly<Record<L, string>>; counts: Float64Array; sum: number; count: number }>()
  registry.registerMetric({
    name,
    help,
    type: "histogram",
    aggregator: "sum",
    get: async () => ({
      name,
      help,
      type: "histogram",
      aggregator: "sum",
      values: [...cells.values()].flatMap((c) => {
        let cumulative = 0
        const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = buckets.map((le, i) => {
          cumulative += c.counts[i]!
          return { labels: { ...c.labels, le }, value: cumulative, metricName: `${name}_bucket` }
        })
        values.push({ labels: { ...c.labels, le: "+Inf" }, value: c.count, metricName: `${name}_bucket` })
        values.push({ labels: { ...c.labels }, value: c.sum, metricName: `${name}_sum` })
        values.push({ labels: { ...c.labels }, value: c.count, metricName: `${name}_count` })
        return values
      })
    }),
    reset: () => cells.clear()
  } as never)
  const cell = (labels: Readonly<Record<L, string>>): HistogramCell => {
    const key = labelNames.map((l) => labels[l]).join("\u0000")
    let found = cells.get(key)
    if (found === undefined) {
      found = { labels, counts: new Float64Array(buckets.length), sum: 0, count: 0 }
      cells.set(key, found)
    }
    const c = found
    return {
      observe: (value) => {
        c.sum += value
        c.count += 1
        for (let i = 0; i < buckets.length; i++) {
          if (value <= buckets[i]!) {
            c.counts[i]! += 1
            return
          }
        }
      }
    }
  }
  return { cell }
}

// ---------------------------------------------------------------------------------------------
// Accepted sends, by channel

/** Where a send came in: the HTTP API, or SMTP submission (src/transactional/submission, issue 32). */
export const SEND_CHANNELS = ["api", "smtp"] as const
export type SendChannel = typeof SEND_CHANNELS[number]
/** What became of an accepted send request (202 / 250). */
export const SEND_OUTCOMES = ["queued", "scheduled", "sandbox", "nothing_to_send", "replayed"] as const
export type SendOutcome = typeof SEND_OUTCOMES[number]
/** A send's items (one message each, for its recipients), by their status (README "Send item statuses"). */
export const ITEM_STATUSES = ["queued", "suppressed", "rejected", "failed", "skipped"] as const
export type ItemStatus = typeof ITEM_STATUSES[number]

const sends = grid2(
  cellCounter("herald_sends_accepted_total", "Send requests accepted, by channel (api, smtp) and outcome", ["channel", "outcome"]),
  ["channel", "outcome"],
  SEND_CHANNELS,
  SEND_OUTCOMES
)
const sendItems = grid2(
  cellCounter(
    "herald_send_messages_total",
    "Messages (one per personalization, for its recipients) of accepted sends, by channel and item status",
    ["channel", "status"]
  ),
  ["channel", "status"],
  SEND_CHANNELS,
  ITEM_STATUSES
)

/**
 * THE place every entry that accepts a send reports it: the HTTP send endpoint with `api`, SMTP
 * submission with `smtp` (one call per accepted transaction). `items` are the answer's item statuses.
 */
export const recordAcceptedSend = (channel: SendChannel, outcome: SendOutcome, items: ReadonlyArray<{ readonly status: string }>): void => {
  sends[channel][outcome].inc()
  const byStatus = sendItems[channel]
  for (const item of items) (byStatus[item.status as ItemStatus] ?? byStatus.failed).inc()
}

// ---------------------------------------------------------------------------------------------
// Deliveries, by result and destination site

export const DELIVERY_RESULTS = ["sent", "deferred", "bounced", "failed"] as const
export type DeliveryResult = typeof DELIVERY_RESULTS[number]
/** The label of every destination not named in config/shaping.json. */
export const OTHER_SITE = "other"

const deliveries = cellCounter(
  "herald_deliveries_total",
  "Delivery attempts' outcomes by result (sent, deferred, bounced, failed) and destination site (config/shaping.json's names, else other)",
  ["result", "site"]
)
let allowedSites: ReadonlySet<string> = new Set()
const deliveryCells = new Map<string, Readonly<Record<DeliveryResult, CounterCell>>>()
const deliveryCellsOf = (site: string) => {
  let found = deliveryCells.get(site)
  if (found === undefined) {
    found = Object.fromEntries(DELIVERY_RESULTS.map((result) => [result, deliveries.cell({ result, site })])) as never
    deliveryCells.set(site, found!)
  }
  return found!
}
deliveryCellsOf(OTHER_SITE)

/** The destination sites that may be labels (config/shaping.json's provider names; the MTA calls it at start). */
export const allowDestinationSites = (names: ReadonlyArray<string>): void => {
  allowedSites = new Set(names)
  for (const name of names) deliveryCellsOf(name)
}

/** `site` as a label: a name allowed above, else `other` (a typo or a customer's domain never becomes a series). */
export const siteLabel = (site: string): string => (allowedSites.has(site) ? site : OTHER_SITE)

export const recordDelivery = (result: DeliveryResult, site: string): void => deliveryCellsOf(siteLabel(site))[result].inc()

// ---------------------------------------------------------------------------------------------
// SMTP replies, DKIM signing

export const REPLY_CLASSES = ["2xx", "4xx", "5xx", "none"] as const
export type ReplyClass = typeof REPLY_CLASSES[number]
const replyCounter = cellCounter(
  "herald_smtp_replies_total",
  "Replies of the far side to outbound SMTP transactions by class; none: no reply (timeout, refused connection)",
  ["class"]
)
const replies = Object.fromEntries(REPLY_CLASSES.map((c) => [c, replyCounter.cell({ class: c })])) as Record<ReplyClass, CounterCell>

export const recordSmtpReply = (code: number | null | undefined): void =>
  replies[code === null || code === undefined ? "none" : code >= 500 ? "5xx" : code >= 400 ? "4xx" : code >= 200 && code < 300 ? "2xx" : "none"]
    .inc()

const dkimSeconds = cellHistogram("herald_dkim_sign_seconds", "Time to DKIM-sign one outbound message", [], [
  0.0005,
  0.001,
  0.002,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1
]).cell({})
export const recordDkimSign = (seconds: number): void => dkimSeconds.observe(seconds)

// ---------------------------------------------------------------------------------------------
// Inbound mail

export const INBOUND_KINDS = ["bounce", "complaint", "dmarc", "other"] as const
export type InboundKind = typeof INBOUND_KINDS[number]
const inboundCounter = cellCounter("herald_inbound_messages_total", "Inbound messages processed, by kind", ["kind"])
const inbound = Object.fromEntries(INBOUND_KINDS.map((k) => [k, inboundCounter.cell({ kind: k })])) as Record<InboundKind, CounterCell>
const parseFailures = cellCounter("herald_inbound_parse_failures_total", "Inbound messages that could not be parsed", []).cell({})

export const recordInbound = (kind: InboundKind): void => inbound[kind].inc()
export const recordInboundParseFailure = (): void => parseFailures.inc()

// ---------------------------------------------------------------------------------------------
// Webhooks

export const WEBHOOK_RESULTS = ["delivered", "retry", "failed"] as const
export type WebhookResult = typeof WEBHOOK_RESULTS[number]
const webhookCounter = cellCounter(
  "herald_webhook_attempts_total",
  "Webhook POST attempts by result: delivered (2xx), retry (failed, another attempt follows), failed (the last attempt failed: dead letter)",
  ["result"]
)
const webhookAttempts = Object.fromEntries(WEBHOOK_RESULTS.map((r) => [r, webhookCounter.cell({ result: r })])) as Record<WebhookResult, CounterCell>
export const recordWebhookAttempt = (result: WebhookResult): void => webhookAttempts[result].inc()

// ---------------------------------------------------------------------------------------------
// Authentication failures (the API's and /metrics')

const authFailures = cellCounter(
  "herald_auth_failures_total",
  "Failed authentications (a wrong or unknown token), by where: api (/v1/), metrics (/metrics)",
  ["endpoint"]
)
export const AUTH_ENDPOINTS = ["api", "metrics"] as const
const authFailureCells = Object.fromEntries(AUTH_ENDPOINTS.map((e) => [e, authFailures.cell({ endpoint: e })])) as Record<
  typeof AUTH_ENDPOINTS[number],
  CounterCell
>
export const recordAuthFailure = (endpoint: typeof AUTH_ENDPOINTS[number]): void => authFailureCells[endpoint].inc()

// ---------------------------------------------------------------------------------------------
// HTTP requests

/** Request durations: the send answers in milliseconds, exports and imports in seconds. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const httpRequests = cellCounter("herald_http_requests_total", "HTTP requests by method, route template and status", ["method", "route", "status"])
const httpSeconds = cellHistogram(
  "herald_http_request_duration_seconds",
  "HTTP request latency by method and route template",
  ["method", "route"],
  HTTP_BUCKETS
)

/** Methods as labels: the standard ones, anything else one label. */
const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

interface RouteCells {
  readonly byStatus: Map<number, CounterCell>
  readonly latency: HistogramCell
}
/** route → method → cells: found without building a key string. */
const routeCells = new Map<string, Map<string, RouteCells>>()

/**
 * One answered request. `route` is a path template from the API's own routes (or the one
 * unknown-route label), never the raw path; `method` outside the standard set is `OTHER`.
 */
export const recordHttpRequest = (method: string, route: string, status: number, seconds: number): void => {
  const m = HTTP_METHODS.has(method) ? method : "OTHER"
  let byMethod = routeCells.get(route)
  if (byMethod === undefined) routeCells.set(route, byMethod = new Map())
  let cells = byMethod.get(m)
  if (cells === undefined) {
    cells = { byStatus: new Map(), latency: httpSeconds.cell({ method: m, route }) }
    byMethod.set(m, cells)
  }
  let cell = cells.byStatus.get(status)
  if (cell === undefined) {
    cell = httpRequests.cell({ method: m, route, status: String(status) })
    cells.byStatus.set(status, cell)
  }
  cell.inc()
  cells.latency.observe(seconds)
}

// ---------------------------------------------------------------------------------------------
// Gauges set at scrape time (src/api/metrics/)

/** A gauge with fixed label names, set whole at each scrape. */
const gauge = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>, appliance: boolean) =>
  new Gauge<L>({ name, help, labelNames, registers: [registry], ...(appliance ? { aggregator: "first" as const } : {}) })

/**
 * Read from the database: the same for every process and replica (`aggregator: "first"`, the
 * scraped worker's; across replicas alert on `max`, never `sum`), refreshed at most every 15 s.
 */
export const applianceGauges = {
  queueDeliveries: gauge("herald_queue_deliveries", "Deliveries waiting, by state (queued, deferred) and lane (transactional, bulk)", ["state", "lane"], true),
  oldestDueSeconds: gauge("herald_queue_oldest_due_seconds", "How long the most overdue waiting delivery has been due (0: none due)", ["lane"], true),
  webhookBacklog: gauge("herald_webhook_backlog", "Webhook deliveries pending (not delivered, not failed)", [], true),
  webhookOldestPendingSeconds: gauge("herald_webhook_oldest_pending_seconds", "Age of the oldest pending webhook delivery (0: none)", [], true),
  campaignsSending: gauge("herald_campaigns_sending", "Campaigns in state sending", [], true),
  campaignFanoutBacklog: gauge("herald_campaign_fanout_backlog", "Recipients of sending campaigns not yet written into the queue", [], true),
  trackingBacklog: gauge("herald_tracking_log_backlog", "Opens and clicks logged and not yet counted by the tracking aggregator", [], true),
  trackingLagSeconds: gauge("herald_tracking_aggregator_lag_seconds", "Age of the oldest open or click the aggregator has not counted (0: none)", [], true),
  sequenceStepsDue: gauge("herald_sequence_steps_due", "Active sequence subscriptions whose next step is due", [], true),
  databaseUp: gauge("herald_database_up", "1 when the scrape's database reads succeeded, else 0", [], true),
  snapshotAgeSeconds: gauge("herald_database_gauges_age_seconds", "Age of the cached database figures above (refreshed at most every 15 s)", [], true)
} as const

/** This process's own figures: they sum across processes. */
export const processGauges = {
  mtaInHand: gauge("herald_mta_attempts_in_hand", "Deliveries this process's MTA has claimed and not finished, by lane", ["lane"], false),
  mtaRunning: gauge("herald_mta_attempts_running", "SMTP attempts running now in this process", [], false),
  mtaBudgetBytes: gauge("herald_mta_message_budget_used_bytes", "Bytes of messages this process's MTA holds in memory", [], false),
  webhookLanes: gauge("herald_webhook_lanes", "Webhook keys with a lane (work in hand) in this process's dispatcher", [], false),
  webhookWorkers: gauge("herald_webhook_workers", "Webhook workers running in this process's dispatcher", [], false),
  dbPoolInUse: gauge("herald_db_pool_connections", "PostgreSQL pool connections of this process, by state (in_use, idle, waiting: callers waiting for one)", [
    "state"
  ], false)
} as const

/** Whether the metrics registry's output is Prometheus text (the header the route answers with). */
export const METRICS_CONTENT_TYPE = registry.contentType
