/**
 * GET /metrics with several processes (HERALD_PROCESSES): the worker a scrape reaches answers with
 * the supervisor's aggregate of every worker's registry, so the figures are the appliance's
 * whichever worker Prometheus reaches. The messages go over node:cluster's IPC channel:
 *
 *   worker → supervisor  REQUEST {id, metrics}   the scraped worker's own registry, freshly set
 *   supervisor → worker  COLLECT {gather}        every other worker: "your registry, please"
 *   worker → supervisor  PART {gather, metrics}  (after setting its own process gauges)
 *   supervisor → worker  TEXT {id, text}         the aggregate, in Prometheus text
 *
 * The supervisor's side (aggregation, the counters of workers that died) is in
 * src/supervisor/metrics-hub.ts; this file is the workers' side and the message shapes.
 */
import type { MetricObjectWithValues, MetricValue } from "prom-client"

export type MetricsJson = Array<MetricObjectWithValues<MetricValue<string>>>

export const METRICS_REQUEST = "herald:metrics-request"
export const METRICS_COLLECT = "herald:metrics-collect"
export const METRICS_PART = "herald:metrics-part"
export const METRICS_TEXT = "herald:metrics-text"

export type ClusterMetricsMessage =
  | { readonly type: typeof METRICS_REQUEST; readonly id: number; readonly metrics: MetricsJson }
  | { readonly type: typeof METRICS_COLLECT; readonly gather: number }
  | { readonly type: typeof METRICS_PART; readonly gather: number; readonly metrics: MetricsJson }
  | { readonly type: typeof METRICS_TEXT; readonly id: number; readonly text: string }

export const isClusterMetricsMessage = (message: unknown): message is ClusterMetricsMessage =>
  typeof message === "object" && message !== null && typeof (message as { type?: unknown }).type === "string" &&
  (message as { type: string }).type.startsWith("herald:metrics-")

/** How long a scrape waits for the supervisor's aggregate (it waits for the other workers ≤ 2 s). */
export const AGGREGATE_TIMEOUT_MS = 5_000

let nextId = 0

/** In a worker: the appliance's metrics text, aggregated by the supervisor from `own` and every other worker's. */
export const askSupervisor = (own: MetricsJson): Promise<string> =>
  new Promise((resolve, reject) => {
    const id = nextId++
    const onMessage = (message: unknown) => {
      if (!isClusterMetricsMessage(message) || message.type !== METRICS_TEXT || message.id !== id) return
      clearTimeout(timer)
      process.off("message", onMessage)
      resolve(message.text)
    }
    const timer = setTimeout(() => {
      process.off("message", onMessage)
      reject(new Error(`the supervisor did not answer within ${AGGREGATE_TIMEOUT_MS} ms`))
    }, AGGREGATE_TIMEOUT_MS)
    process.on("message", onMessage)
    process.send?.({ type: METRICS_REQUEST, id, metrics: own } satisfies ClusterMetricsMessage)
  })

/**
 * In a worker: answers the supervisor's collects with `collect()` (this worker's registry, its own
 * gauges set first). Returns what removes the listener.
 */
export const answerCollects = (collect: () => Promise<MetricsJson>): () => void => {
  const onMessage = (message: unknown) => {
    if (!isClusterMetricsMessage(message) || message.type !== METRICS_COLLECT) return
    const gather = message.gather
    collect().then(
      (metrics) => process.send?.({ type: METRICS_PART, gather, metrics } satisfies ClusterMetricsMessage),
      () => process.send?.({ type: METRICS_PART, gather, metrics: [] } satisfies ClusterMetricsMessage)
    )
  }
  process.on("message", onMessage)
  return () => void process.off("message", onMessage)
}
