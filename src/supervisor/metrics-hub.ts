/**
 * The supervisor's side of GET /metrics with several processes (src/lib/cluster-metrics.ts has
 * the protocol): a worker that is scraped sends its registry; the hub collects every other
 * worker's and answers with prom-client's `AggregatorRegistry.aggregate` of them all.
 *
 * Order matters: the scraped worker's registry comes first, so the appliance-wide gauges
 * (`aggregator: "first"`, src/lib/metrics.ts) are the ones it has just read from the database.
 *
 * A worker that dies must not make a sum go down: the hub keeps each worker's counters and
 * histograms as last collected, and when the worker exits they join `retired`, which every later
 * answer adds in. What a worker counted after the last scrape before its death is lost (the
 * counters then stay where they were; Prometheus's `rate()` sees no reset).
 */
import cluster, { type Worker } from "node:cluster"
import { Effect } from "effect"
import { AggregatorRegistry } from "prom-client"
import {
  type ClusterMetricsMessage,
  isClusterMetricsMessage,
  METRICS_COLLECT,
  METRICS_PART,
  METRICS_REQUEST,
  METRICS_TEXT,
  type MetricsJson
} from "../lib/cluster-metrics.ts"

/** How long a scrape waits for the other workers' registries; a worker that is late is left out of that answer. */
const GATHER_TIMEOUT_MS = 2_000

interface Gather {
  readonly requester: Worker
  readonly id: number
  readonly parts: Array<MetricsJson>
  readonly waiting: Set<number>
  readonly timer: ReturnType<typeof setTimeout>
}

/** What survives a worker's death: the series that only grow (counters, histograms summed). */
const growingOnly = (metrics: MetricsJson): MetricsJson =>
  metrics.filter((m) => (String(m.type) === "counter" || String(m.type) === "histogram") && (m.aggregator ?? "sum") === "sum")

const makeHub = () => {
  const lastSeen = new Map<number, MetricsJson>()
  let retired: MetricsJson = []
  // Retirements merge one after another (aggregate is asynchronous to read back).
  let retiring: Promise<void> = Promise.resolve()
  const gathers = new Map<number, Gather>()
  let nextGather = 0

  const finish = (gatherId: number) => {
    const gather = gathers.get(gatherId)
    if (gather === undefined) return
    gathers.delete(gatherId)
    clearTimeout(gather.timer)
    void retiring.then(async () => {
      const text = await AggregatorRegistry.aggregate([...gather.parts, retired]).metrics()
      if (gather.requester.isConnected()) gather.requester.send({ type: METRICS_TEXT, id: gather.id, text } satisfies ClusterMetricsMessage)
    })
  }

  const onMessage = (worker: Worker, message: unknown) => {
    if (!isClusterMetricsMessage(message)) return
    if (message.type === METRICS_REQUEST) {
      lastSeen.set(worker.id, message.metrics)
      const gatherId = nextGather++
      const others = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.id !== worker.id && w.isConnected())
      const timer = setTimeout(() => finish(gatherId), GATHER_TIMEOUT_MS)
      gathers.set(gatherId, { requester: worker, id: message.id, parts: [message.metrics], waiting: new Set(others.map((w) => w.id)), timer })
      for (const other of others) other.send({ type: METRICS_COLLECT, gather: gatherId } satisfies ClusterMetricsMessage)
      if (others.length === 0) finish(gatherId)
    } else if (message.type === METRICS_PART) {
      lastSeen.set(worker.id, message.metrics)
      const gather = gathers.get(message.gather)
      if (gather === undefined || !gather.waiting.delete(worker.id)) return
      gather.parts.push(message.metrics)
      if (gather.waiting.size === 0) finish(message.gather)
    }
  }

  const onExit = (worker: Worker) => {
    for (const [gatherId, gather] of gathers) {
      if (gather.waiting.delete(worker.id) && gather.waiting.size === 0) finish(gatherId)
    }
    const last = lastSeen.get(worker.id)
    lastSeen.delete(worker.id)
    if (last === undefined) return
    retiring = retiring.then(async () => {
      retired = growingOnly(await AggregatorRegistry.aggregate([retired, growingOnly(last)]).getMetricsAsJSON() as MetricsJson)
    })
  }

  return { onMessage, onExit }
}

/** The hub, listening to the workers for the scope's life. */
export const metricsHub = Effect.acquireRelease(
  Effect.sync(() => {
    const hub = makeHub()
    cluster.on("message", hub.onMessage)
    cluster.on("exit", hub.onExit)
    return hub
  }),
  (hub) =>
    Effect.sync(() => {
      cluster.off("message", hub.onMessage)
      cluster.off("exit", hub.onExit)
    })
)
