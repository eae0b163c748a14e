/**
 * The supervisor of several appliance processes (HERALD_PROCESSES > 1, src/config/process-share.ts):
 * a node:cluster primary that serves nothing itself.
 *
 * 1. Starts the embedded PostgreSQL (sized for N processes) or, with DATABASE_URL, checks that the
 *    server takes N processes' connections (refused at start in one line otherwise).
 * 2. Runs what must happen once — the migrations and the bootstrap (which prints a new admin key)
 *    — given to it by the composition root.
 * 3. Forks N workers. Each is a full appliance replica (HTTP API, MX and submission listeners, MTA,
 *    dispatcher, actors) coordinating through PostgreSQL as separate replicas already do (claims,
 *    leases, destination limits); node:cluster shares the listening sockets among them. Each takes
 *    1/N of the per-appliance limits and of the V8 heap cap.
 * 4. Starts again a worker that dies, after 1 s, doubling to 30 s while it keeps dying young.
 * 5. On SIGTERM/SIGINT (Effect's runMain interrupts this fiber, and the scope closes in reverse):
 *    every worker gets SIGTERM and drains, each bounded by DRAIN_DEADLINE (then SIGKILL); the
 *    metrics hub stops; PostgreSQL stops last.
 */
import cluster from "node:cluster"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../config/app-config.ts"
import { connectionsNeeded, embeddedMaxConnections, StartRefused, workerHeapMb } from "../config/process-share.ts"
import { startEmbeddedPostgres } from "../db/embedded-postgres.ts"
import { metricsHub } from "./metrics-hub.ts"

/** How long one worker may take to drain after SIGTERM before it is killed (docker stop waits 10 s by default; compose often 30). */
export const DRAIN_DEADLINE = Duration.seconds(25)

/** A worker's first restart waits this long; each quick death doubles it up to RESTART_MAX. */
const RESTART_MIN_MS = 1_000
const RESTART_MAX_MS = 30_000
/** A worker that ran this long died of something new: its next restart waits RESTART_MIN again. */
const STABLE_MS = 60_000

/** The wait before starting a worker again, from the previous wait and how long it ran. */
export const restartDelayMs = (previous: number | undefined, ranMs: number): number =>
  previous === undefined || ranMs >= STABLE_MS ? RESTART_MIN_MS : Math.min(RESTART_MAX_MS, previous * 2)

/** DATABASE_URL's server must take every worker's pool, export pool and listener. */
const ensureEnoughConnections = (url: string, needed: number) =>
  Effect.tryPromise({
    try: async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
      await client.connect()
      try {
        const { rows } = await client.query<{ max: string; reserved: string }>(
          "SELECT current_setting('max_connections') AS max, current_setting('superuser_reserved_connections') AS reserved"
        )
        return Number(rows[0]!.max) - Number(rows[0]!.reserved)
      } finally {
        await client.end().catch(() => {})
      }
    },
    catch: (cause) => new StartRefused({ message: `herald: cannot reach DATABASE_URL's server: ${cause instanceof Error ? cause.message : String(cause)}` })
  }).pipe(
    Effect.filterOrFail(
      (available) => available >= needed,
      (available) =>
        new StartRefused({
          message: `herald: DATABASE_URL's server takes ${available} connections and HERALD_PROCESSES needs ${needed} ` +
            `(each process: its pool, its export pool and a listener); raise max_connections, or lower HERALD_PROCESSES or HERALD_DB_POOL_MAX`
        })
    )
  )

interface WorkerExit {
  readonly pid: number | undefined
  readonly code: number | null
  readonly signal: string | null
}

/** One worker, forked now; ends when it exits. Interrupted: SIGTERM, drain within DRAIN_DEADLINE, else SIGKILL. */
const runWorker = (slot: number, env: Record<string, string>) =>
  Effect.suspend(() => {
    const worker = cluster.fork(env)
    const exited = new Promise<WorkerExit>((resolve) =>
      worker.process.once("exit", (code, signal) => resolve({ pid: worker.process.pid, code, signal }))
    )
    const drain = Effect.gen(function*() {
      if (worker.process.exitCode !== null || worker.process.signalCode !== null) return
      worker.process.kill("SIGTERM")
      const drained = yield* Effect.promise(() => exited).pipe(Effect.timeoutOption(DRAIN_DEADLINE))
      if (Option.isSome(drained)) return
      yield* Effect.logWarning("an appliance process did not drain in time: killed").pipe(Effect.annotateLogs({ slot, pid: worker.process.pid }))
      worker.process.kill("SIGKILL")
      yield* Effect.promise(() => exited)
    })
    return Effect.logInfo("appliance process started").pipe(
      Effect.annotateLogs({ slot, pid: worker.process.pid }),
      Effect.zipRight(Effect.promise(() => exited)),
      Effect.onInterrupt(() => drain)
    )
  })

/** A slot keeps one worker running, started again after each death with a growing wait. */
const superviseSlot = (slot: number, env: Record<string, string>) =>
  Effect.gen(function*() {
    let delay: number | undefined
    for (;;) {
      const started = yield* Clock.currentTimeMillis
      const exit = yield* runWorker(slot, env)
      const ran = (yield* Clock.currentTimeMillis) - started
      delay = restartDelayMs(delay, ran)
      yield* Effect.logError("an appliance process exited; starting it again").pipe(
        Effect.annotateLogs({ slot, pid: exit.pid, code: exit.code, signal: exit.signal, ran_ms: ran, restart_in_ms: delay })
      )
      yield* Effect.sleep(Duration.millis(delay))
    }
  })

/**
 * The supervisor for `processes` workers. `prepare` (the migrations and the bootstrap) runs once,
 * against the database the workers will use, before the first is forked.
 */
export const supervise = (processes: number, prepare: Layer.Layer<never, unknown, AppConfig>) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const config = yield* AppConfig
    const needed = connectionsNeeded(processes, config.dbPoolMax, config.exportPoolMax)
    const url = Option.isSome(config.databaseUrl)
      ? Redacted.value(config.databaseUrl.value)
      : (yield* startEmbeddedPostgres(config.dataDir, {
        maxConnections: embeddedMaxConnections(processes, config.dbPoolMax, config.exportPoolMax)
      })).url
    if (Option.isSome(config.databaseUrl)) yield* ensureEnoughConnections(url, needed)
    // Its own small pool, closed before the workers open theirs.
    const once = { ...config, databaseUrl: Option.some(Redacted.make(url)), dbPoolMax: 2 }
    yield* Effect.scoped(Layer.build(prepare)).pipe(Effect.provideService(AppConfig, once))
    const heapMb = workerHeapMb(processes, process.execArgv, process.env["NODE_OPTIONS"])
    cluster.setupPrimary({
      execArgv: [
        ...process.execArgv.filter((flag) => !flag.startsWith("--max-old-space-size=")),
        ...(heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`])
      ]
    })
    yield* metricsHub
    // The workers read the resolved N (their share) and the database in their environment.
    const env = { HERALD_PROCESSES: String(processes), DATABASE_URL: url }
    yield* Effect.logInfo("starting the appliance processes").pipe(Effect.annotateLogs({ processes, heap_mb: heapMb ?? "default" }))
    yield* Effect.forkScoped(Effect.forEach(Array.from({ length: processes }, (_, slot) => slot), (slot) => superviseSlot(slot, env), {
      concurrency: "unbounded",
      discard: true
    }))
  }))
