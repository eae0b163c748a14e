/**
 * Shared pieces of the benchmarks: a PostgreSQL for the run, child processes, a closed-loop HTTP
 * load generator with latency percentiles, and a table printer. Benchmarks print figures; they
 * assert nothing (targets are read off the printed ratios).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import nodemailer from "nodemailer"
import pg from "pg"
import { SMTPServer } from "smtp-server"
import { startEmbeddedPostgres } from "../src/db/embedded-postgres.ts"
import { startDnsServer } from "../test/support/dns-server.ts"

export const repoRoot = path.resolve(import.meta.dirname, "..")

/** The run's PostgreSQL: DATABASE_URL's server, or an embedded one in a temp dir. */
export const benchPostgres = async () => {
  if (process.env["DATABASE_URL"]) return { adminUrl: process.env["DATABASE_URL"], stop: async () => undefined }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-"))
  fs.chmodSync(dir, 0o755)
  const scope = Effect.runSync(Scope.make())
  const cluster = await Effect.runPromise(startEmbeddedPostgres(dir).pipe(Scope.extend(scope)))
  return {
    adminUrl: cluster.adminUrl,
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

export const createDatabase = async (adminUrl: string, name: string) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  await client.query(`DROP DATABASE IF EXISTS ${name}`)
  await client.query(`CREATE DATABASE ${name}`)
  await client.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export const sql = async (url: string, text: string, values: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows
  } finally {
    await client.end()
  }
}

/**
 * A reader of how many statements the database has run so far, or null readings when the server
 * has no pg_stat_statements (it must be in shared_preload_libraries).
 */
export const statementCounter = async (databaseUrl: string) => {
  const available = await sql(databaseUrl, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements").then(() => true, () => false)
  return async () => {
    if (!available) return null
    const [row] = await sql(databaseUrl, `SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).catch(() => [undefined])
    return row === undefined ? null : Number(row["n"])
  }
}

/**
 * A reader of how many transactions `databaseUrl`'s database has committed or rolled back so far:
 * every statement outside BEGIN is one, so per item it is the statements that group commit did not
 * share (available on every server, unlike pg_stat_statements). PostgreSQL publishes the counts
 * within about a second: read after the load has ended and settled.
 */
export const transactionCounter = (databaseUrl: string) => async () => {
  const [row] = await sql(databaseUrl, `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`)
  return Number(row?.["n"] ?? 0)
}

export const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = http.createServer().listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
    })
  })

export const waitFor = async (url: string, ms = 60_000) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    try {
      // Bounded: a request the starting appliance accepted but never answered held this loop for
      // undici's five-minute header timeout, past the whole wait.
      if ((await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok) return
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${url} not ready`)
}

/** Waits until something accepts TCP connections on 127.0.0.1:`port` (an SMTP server, say). */
export const waitForTcp = async (port: number, ms = 60_000) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy()
        resolve(true)
      })
      socket.once("error", () => resolve(false))
    })
    if (up) return
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`127.0.0.1:${port} not accepting connections`)
}

/** utime + stime of a process, in seconds, from /proc (0 once it is gone). */
const procCpuSeconds = (pid: number | string) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100 // clock ticks of 10 ms
  } catch {
    return 0
  }
}

/**
 * CPU seconds used so far by every PostgreSQL server process on the machine (the bench's cluster:
 * nothing else runs beside a benchmark); the difference over a run is the database's share of it.
 */
const postgresCpuSeconds = () =>
  fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).reduce((sum, pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres" ? sum + procCpuSeconds(pid) : sum
    } catch {
      return sum
    }
  }, 0)

export interface Child {
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
  readonly peakRssMb: () => number
  /** CPU seconds (user + system) the child has used so far, from /proc. */
  readonly cpuSeconds: () => number
}

/** The CPU seconds of `pid` and of its node children: the appliance's workers under HERALD_PROCESSES > 1. */
const applianceCpuSeconds = (pid: number) => {
  let children: Array<string> = []
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((c) => c !== "")
  } catch {
    // gone
  }
  return children.reduce((sum, child) => {
    try {
      return fs.readFileSync(`/proc/${child}/comm`, "utf8").trim() === "node" ? sum + procCpuSeconds(child) : sum
    } catch {
      return sum
    }
  }, procCpuSeconds(pid))
}

/**
 * How many appliance processes the benchmarks start: HERALD_PROCESSES from their own environment
 * (`HERALD_PROCESSES=2 npm run bench:accept`), 1 by default; printed once as the appliance starts.
 */
export const benchProcesses = process.env["HERALD_PROCESSES"] ?? "1"
let processesPrinted = false

/** The V8 flags `npm start` gives the appliance (its heap cap): the benchmarks run it the same way. */
const applianceFlags = (JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).scripts.start as string)
  .split(" ")
  .filter((word) => word.startsWith("--max-"))

/**
 * Starts counting the CPU that `child` and PostgreSQL use from now; the function it answers gives
 * the milliseconds each spent per item, for `items` items, since then.
 */
export const cpuMeter = (child: Child) => {
  const child0 = child.cpuSeconds()
  const postgres0 = postgresCpuSeconds()
  return (items: number) => ({
    cpuMs: ((child.cpuSeconds() - child0) * 1000) / Math.max(1, items),
    pgCpuMs: ((postgresCpuSeconds() - postgres0) * 1000) / Math.max(1, items)
  })
}

/**
 * Spawns `node --import tsx <script>` with env, sampling its RSS from /proc every 200 ms; the
 * appliance (src/main.ts) as `npm start` runs it: compiled (bin/herald.mjs), with its flags. BENCH_NODE_FLAGS adds flags to every child
 * (say `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a run).
 */
export const spawnNode = (script: string, env: Record<string, string>, args: ReadonlyArray<string> = []): Child => {
  const flags = [...(script === "src/main.ts" ? applianceFlags : []), ...(process.env["BENCH_NODE_FLAGS"] ?? "").split(" ").filter(Boolean)]
  const entry = script === "src/main.ts" ? ["bin/herald.mjs"] : ["--import", "tsx", script]
  const appliance = script === "src/main.ts"
  if (appliance && !processesPrinted) {
    processesPrinted = true
    console.log(`appliance: HERALD_PROCESSES=${benchProcesses}`)
  }
  const child = spawn(process.execPath, [...flags, ...entry, ...args], {
    cwd: repoRoot,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "/tmp",
      HERALD_LOG_LEVEL: "warn",
      ...(appliance ? { HERALD_PROCESSES: benchProcesses } : {}),
      // How node:cluster hands the workers connections (`rr`, Node's default on Linux, or `none`: the kernel's accept).
      ...(appliance && process.env["NODE_CLUSTER_SCHED_POLICY"] ? { NODE_CLUSTER_SCHED_POLICY: process.env["NODE_CLUSTER_SCHED_POLICY"] } : {}),
      ...env
    },
    stdio: ["ignore", "inherit", "inherit"]
  })
  let peak = 0
  const timer = setInterval(() => {
    try {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8")
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      peak = Math.max(peak, kb / 1024)
    } catch {
      // gone
    }
  }, 200)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    process: child,
    peakRssMb: () => peak,
    cpuSeconds: () => applianceCpuSeconds(child.pid!),
    stop: async () => {
      clearInterval(timer)
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}

export interface LoadResult {
  readonly requests: number
  readonly ok: number
  readonly seconds: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const REQUEST_TIMEOUT_MS = 30_000

/** `concurrency` closed loops POSTing `body()` for `seconds` (after `warmup` seconds not counted). */
export const load = async (options: {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: (i: number) => string
  readonly concurrency: number
  readonly seconds: number
  readonly warmup?: number
  readonly expectStatus: number
  /** Stops the loops early, e.g. after a number of requests. */
  readonly until?: () => boolean
}): Promise<LoadResult> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  const target = new URL(options.url)
  let counter = 0
  const post = (payload: string) =>
    new Promise<number>((resolve) => {
      const req = http.request({
        agent, host: target.hostname, port: target.port, path: target.pathname, method: "POST",
        headers: { ...options.headers, "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
      }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode ?? 0))
      })
      // An answer that never comes counts as a failure (status 0) instead of hanging the run.
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error("no answer")))
      req.on("error", () => resolve(0))
      req.end(payload)
    })
  const run = async (until: number, record: boolean, latencies: Array<number>, tally: { ok: number; total: number }) => {
    while (Date.now() < until && !(record && options.until?.())) {
      const start = performance.now()
      const status = await post(options.body(counter++))
      if (record) {
        latencies.push(performance.now() - start)
        tally.total += 1
        if (status === options.expectStatus) tally.ok += 1
      }
    }
  }
  const scratch = { ok: 0, total: 0 }
  await Promise.all(Array.from({ length: options.concurrency }, () => run(Date.now() + (options.warmup ?? 2) * 1000, false, [], scratch)))
  const latencies: Array<number> = []
  const tally = { ok: 0, total: 0 }
  const started = performance.now()
  await Promise.all(Array.from({ length: options.concurrency }, () => run(Date.now() + options.seconds * 1000, true, latencies, tally)))
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    requests: tally.total,
    ok: tally.ok,
    seconds,
    perSecond: tally.ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99)
  }
}

export interface SmtpMessage {
  /** MAIL FROM; false for the null sender of a bounce (MAIL FROM:<>). */
  readonly from: string | false
  readonly to: string
  readonly raw: Buffer
}

/**
 * `concurrency` closed loops sending `messages` in turn to 127.0.0.1:`port` through one pooled
 * nodemailer transport (a connection per loop, kept open, RSET between messages) for `seconds`
 * (after `warmup` seconds not counted). A message counts as ok when its recipient got a 250.
 */
export const smtpLoad = async (options: {
  readonly messages: ReadonlyArray<SmtpMessage>
  readonly port: number
  readonly concurrency: number
  readonly seconds: number
  readonly warmup?: number
  /** Called when the measured part begins (after the warm-up). */
  readonly onStart?: () => void
  /** AUTH on each connection (SMTP submission: an API key as the password). */
  readonly auth?: { readonly user: string; readonly pass: string }
}): Promise<LoadResult> => {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1", port: options.port, pool: true, maxConnections: options.concurrency, maxMessages: Infinity,
    ignoreTLS: true, connectionTimeout: 10_000, socketTimeout: 30_000, ...(options.auth === undefined ? {} : { auth: options.auth })
  })
  let counter = 0
  const send = async () => {
    const m = options.messages[counter++ % options.messages.length]!
    try {
      const info = await transport.sendMail({ envelope: { from: m.from, to: [m.to] }, raw: m.raw })
      return info.accepted.length > 0
    } catch {
      return false
    }
  }
  const run = async (ms: number, latencies: Array<number>, tally: { ok: number; total: number }) => {
    const until = Date.now() + ms
    await Promise.all(Array.from({ length: options.concurrency }, async () => {
      while (Date.now() < until) {
        const start = performance.now()
        const ok = await send()
        latencies.push(performance.now() - start)
        tally.total += 1
        if (ok) tally.ok += 1
      }
    }))
  }
  await run((options.warmup ?? 2) * 1000, [], { ok: 0, total: 0 })
  const latencies: Array<number> = []
  const tally = { ok: 0, total: 0 }
  options.onStart?.()
  const started = performance.now()
  await run(options.seconds * 1000, latencies, tally)
  const seconds = (performance.now() - started) / 1000
  transport.close()
  latencies.sort((a, b) => a - b)
  return { requests: tally.total, ok: tally.ok, seconds, perSecond: tally.ok / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

export const table = (rows: ReadonlyArray<Record<string, string | number>>) => {
  const columns = Object.keys(rows[0] ?? {})
  const fmt = (v: string | number) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(1)) : v)
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => fmt(r[c]!).length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ")
  console.log(line(columns))
  for (const r of rows) console.log(line(columns.map((c) => fmt(r[c]!))))
}

/** A JSON client of the bench's appliance with `token`: a status of 300 or more throws with the body. */
export const apiCaller = (base: string, token: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const json = await res.json() as Record<string, unknown>
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/**
 * The bulk benches' sender: `bench.example` added and marked verified, the account's rate and quota
 * out of the way (what is measured is delivery, not the limits); answers the key's row.
 */
export const benchSender = async (call: ReturnType<typeof apiCaller>, databaseUrl: string) => {
  await call("POST", "/v1/client/domains", { domain: "bench.example" })
  await sql(databaseUrl, "UPDATE domains SET verified_at = now()")
  await sql(databaseUrl, "UPDATE accounts SET rate_per_min_override = 100000000, monthly_quota_override = 100000000")
  // Bulk mail needs the key's postal address (issue 30 item 9): the footer is then rendered with every message, as in production.
  await call("PUT", "/v1/bulk/settings", { postal_address: "Herald Bench, 1 Bench Street, Benchtown" })
  const [key] = await sql(databaseUrl, "SELECT id, account_id FROM api_keys ORDER BY created_at LIMIT 1")
  return key!
}

/**
 * The delivery benches' SMTP sink, in the bench's own process: counts messages (and when each
 * arrived) and connections, and discards the messages.
 */
export const startCountingSink = async () => {
  const counts = { received: 0, connections: 0, arrivals: [] as Array<number> }
  const server = new SMTPServer({
    onConnect(_session, cb) {
      counts.connections += 1
      cb()
    },
    authOptional: true, disabledCommands: ["AUTH", "STARTTLS"], logger: false, size: 10 * 1024 * 1024, maxClients: 200,
    onData(stream, _session, cb) {
      stream.on("data", () => undefined)
      stream.on("end", () => {
        counts.received += 1
        counts.arrivals.push(performance.now())
        cb()
      })
    }
  })
  server.on("error", () => undefined)
  const port = await freePort()
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()))
  return Object.assign(counts, {
    port,
    /** Resumes once `target` messages have arrived in all. */
    waitReceived: async (target: number) => {
      while (counts.received < target) await new Promise((r) => setTimeout(r, 20))
    },
    close: () => server.close()
  })
}

/** The delivery benches' DNS on loopback: dest.example's MX is mx.sink.test, 127.0.0.1 (the sink). */
export const startSinkDns = () =>
  startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] }, "dest.example": { MX: [{ preference: 10, exchange: "mx.sink.test" }] } })

/**
 * The appliance (`npm start`'s flags) on free ports, its bootstrap key `token`, delivering through
 * the loopback DNS at `dnsAddress` to the sink on `mxPort`, with `env` on top; `base` is its URL.
 * Not waited for: the caller waits for /health inside the `try` whose `finally` stops it.
 */
export const spawnDeliveringAppliance = async (options: {
  readonly databaseUrl: string
  readonly token: string
  readonly dnsAddress: string
  readonly mxPort: number
  readonly env?: Record<string, string>
}) => {
  const port = await freePort()
  const child = spawnNode("src/main.ts", {
    DATABASE_URL: options.databaseUrl, HERALD_HTTP_PORT: String(port), HERALD_HTTP_HOST: "127.0.0.1", HERALD_SMTP_PORT: String(await freePort()),
    HERALD_BOOTSTRAP_KEY: options.token, HERALD_DNS_SERVERS: options.dnsAddress, HERALD_MX_PORT: String(options.mxPort), HERALD_HOSTNAME: "mta.bench",
    ...options.env
  })
  return Object.assign(child, { base: `http://127.0.0.1:${port}` })
}
