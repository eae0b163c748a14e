/**
 * How many appliance processes run (HERALD_PROCESSES), and each one's share of the appliance's
 * limits: THE place where a per-appliance limit is divided by N.
 *
 * `1` (the default) is today's single process, without a supervisor. A number N > 1, or `auto`,
 * starts a supervisor (src/supervisor/) that forks N workers; each worker is a full replica and
 * takes 1/N of every per-appliance limit, so that N processes together keep the limits one process
 * had and stay inside the container's memory (docs/configuration.md "Several processes"). The
 * supervisor hands the resolved N down to its workers in HERALD_PROCESSES; a process that is not a
 * node:cluster worker always has the whole appliance's limits (the supervisor itself, the
 * operator commands, a single process).
 *
 * `auto` = min(CPUs, the cgroup's CPU quota ÷ period, memory ÷ PER_PROCESS_MIN_MB), at least 1:
 * `--cpus=2` on a 64-core host starts 2, a 1 GB container 4 at most. Memory is HERALD_MEMORY_MB,
 * else the cgroup's limit, else the machine's. `resolveProcesses` is pure: tests give it the
 * contents of fake cgroup files (`readHostFacts` of a temporary directory).
 */
import cluster from "node:cluster"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Data } from "effect"

/**
 * What one appliance process needs at least, in MB: Node, Effect and the loaded areas take about
 * 120 MB of RSS idle, and a worker must still hold one send of MAX_JSON_MB (15 MB of text parses
 * into up to 13 MB more, src/http/bounded-json.ts) and one inbound message beside its share of the
 * budgets. `auto` starts no more processes than the memory holds of these.
 */
export const PER_PROCESS_MIN_MB = 256

/**
 * The smallest V8 heap cap a worker gets when the appliance's cap (--max-old-space-size) is
 * divided by N: below it one large send or inbound message could abort a worker.
 */
export const MIN_WORKER_HEAP_MB = 128

/** A cgroup's "no limit" (v1 writes a huge number; anything above this many bytes counts as none). */
const UNLIMITED_BYTES = 2 ** 60

/** What `auto` decides from: the host, and the cgroup files' contents (undefined: file absent). */
export interface HostFacts {
  readonly cpus: number
  readonly totalMemoryBytes: number
  /** cgroup v2 `cpu.max` ("max 100000" or "200000 100000"). */
  readonly cpuMax?: string | undefined
  /** cgroup v1 `cpu.cfs_quota_us` (-1: none) and `cpu.cfs_period_us`. */
  readonly cfsQuotaUs?: string | undefined
  readonly cfsPeriodUs?: string | undefined
  /** cgroup v2 `memory.max` ("max" or bytes), or v1 `memory.limit_in_bytes`. */
  readonly memoryLimit?: string | undefined
  /** HERALD_MEMORY_MB: the operator's word over the cgroup's. */
  readonly memoryMb?: string | undefined
}

export type ProcessesResolution =
  | { readonly _tag: "Resolved"; readonly processes: number; readonly auto: boolean }
  | { readonly _tag: "Refused"; readonly line: string }

/** The CPUs the cgroup's quota allows (rounded down, at least 1), or undefined without a quota. */
export const cpuQuota = (facts: HostFacts): number | undefined => {
  const [quota, period] = facts.cpuMax !== undefined
    ? facts.cpuMax.trim().split(/\s+/)
    : [facts.cfsQuotaUs?.trim(), facts.cfsPeriodUs?.trim()]
  const q = Number(quota)
  const p = Number(period ?? 100_000)
  if (quota === undefined || quota === "max" || !Number.isFinite(q) || q <= 0 || !Number.isFinite(p) || p <= 0) return undefined
  return Math.max(1, Math.floor(q / p))
}

/** The memory the appliance may use, in MB: HERALD_MEMORY_MB, else the cgroup's limit, else the machine's. */
export const memoryMb = (facts: HostFacts): number => {
  const total = facts.totalMemoryBytes / 1_048_576
  const own = Number(facts.memoryMb)
  if (facts.memoryMb !== undefined && facts.memoryMb.trim() !== "" && Number.isFinite(own) && own > 0) return own
  const limit = Number(facts.memoryLimit?.trim())
  if (facts.memoryLimit === undefined || !Number.isFinite(limit) || limit <= 0 || limit >= UNLIMITED_BYTES) return total
  return Math.min(total, limit / 1_048_576)
}

/** `auto`: min(CPUs, the CPU quota, memory ÷ PER_PROCESS_MIN_MB), at least 1. */
export const autoProcesses = (facts: HostFacts): number =>
  Math.max(1, Math.min(facts.cpus, cpuQuota(facts) ?? facts.cpus, Math.floor(memoryMb(facts) / PER_PROCESS_MIN_MB)))

/** HERALD_PROCESSES as written (unset: 1), or the one line that refuses it. */
export const resolveProcesses = (raw: string | undefined, facts: HostFacts): ProcessesResolution => {
  const value = (raw ?? "").trim().toLowerCase()
  if (facts.memoryMb !== undefined && facts.memoryMb.trim() !== "" && !(Number(facts.memoryMb) > 0)) {
    return { _tag: "Refused", line: `herald: HERALD_MEMORY_MB must be a positive number of megabytes, not ${facts.memoryMb}` }
  }
  if (value === "") return { _tag: "Resolved", processes: 1, auto: false }
  if (value === "auto") return { _tag: "Resolved", processes: autoProcesses(facts), auto: true }
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 256) return { _tag: "Resolved", processes: Number(value), auto: false }
  return { _tag: "Refused", line: `herald: HERALD_PROCESSES must be auto or a whole number from 1 to 256, not ${raw}` }
}

const readOrUndefined = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** The first of `files` that exists under `root`. */
const firstOf = (root: string, files: ReadonlyArray<string>) => {
  for (const file of files) {
    const text = readOrUndefined(path.join(root, file))
    if (text !== undefined) return text
  }
  return undefined
}

/** This host's facts: cgroup v2 files at `root`, else v1's under `root/cpu` and `root/memory`. */
export const readHostFacts = (root = "/sys/fs/cgroup", env: NodeJS.ProcessEnv = process.env): HostFacts => ({
  cpus: os.availableParallelism?.() ?? os.cpus().length,
  totalMemoryBytes: os.totalmem(),
  cpuMax: readOrUndefined(path.join(root, "cpu.max")),
  cfsQuotaUs: firstOf(root, ["cpu/cpu.cfs_quota_us", "cpu,cpuacct/cpu.cfs_quota_us"]),
  cfsPeriodUs: firstOf(root, ["cpu/cpu.cfs_period_us", "cpu,cpuacct/cpu.cfs_period_us"]),
  memoryLimit: firstOf(root, ["memory.max", "memory/memory.limit_in_bytes"]),
  memoryMb: env["HERALD_MEMORY_MB"]
})

/**
 * One process's part of the appliance's limits. `count` and `bytes` divide (rounded down, at
 * least 1); the database pool takes max(2, ⌈pool ÷ N⌉) since a process needs one connection for a
 * transaction and one more for what runs beside it.
 */
export interface ProcessShare {
  readonly processes: number
  readonly count: (total: number) => number
  readonly pool: (total: number) => number
}

export const shareOf = (processes: number): ProcessShare => ({
  processes,
  count: (total) => (processes === 1 ? total : Math.max(1, Math.floor(total / processes))),
  pool: (total) => (processes === 1 ? total : Math.max(2, Math.ceil(total / processes)))
})

/** A worker forked by the supervisor: the resolved N is in its HERALD_PROCESSES. */
export const isSupervisedWorker = (): boolean => cluster.isWorker && Number(process.env["HERALD_PROCESSES"]) > 1

/** This process's share: 1/N in a supervised worker, the whole appliance anywhere else. */
export const processShare: ProcessShare = shareOf(isSupervisedWorker() ? Number(process.env["HERALD_PROCESSES"]) : 1)

/**
 * The embedded PostgreSQL's max_connections for N processes: each opens its pool, its export
 * pool and one LISTEN connection; the margin covers the supervisor's own pool (start-up), operator
 * commands sharing the cluster and the superuser's reserved slots. Never below the 200 one process
 * has always had.
 */
export const EMBEDDED_CONNECTION_MARGIN = 20
export const connectionsNeeded = (processes: number, poolMax: number, exportPoolMax: number): number => {
  const share = shareOf(processes)
  return processes * (share.pool(poolMax) + share.count(exportPoolMax) + 1)
}
export const embeddedMaxConnections = (processes: number, poolMax: number, exportPoolMax: number): number =>
  Math.max(200, connectionsNeeded(processes, poolMax, exportPoolMax) + EMBEDDED_CONNECTION_MARGIN)

/**
 * A worker's V8 heap cap in MB from the appliance's (`--max-old-space-size` in the supervisor's
 * own flags or NODE_OPTIONS; npm start and the image set 512): ÷ N, at least MIN_WORKER_HEAP_MB.
 * Undefined when the appliance has none (V8's default stays).
 */
export const workerHeapMb = (processes: number, execArgv: ReadonlyArray<string>, nodeOptions: string | undefined): number | undefined => {
  const flags = [...(nodeOptions ?? "").split(/\s+/), ...execArgv]
  let cap: number | undefined
  for (const flag of flags) {
    const match = /^--max-old-space-size=(\d+)$/.exec(flag)
    if (match !== null) cap = Number(match[1])
  }
  return cap === undefined ? undefined : Math.max(MIN_WORKER_HEAP_MB, Math.floor(cap / processes))
}

/**
 * The supervisor's refusal to start (a DATABASE_URL server too small for N processes): one line on
 * stderr and exit code 1 (src/cli/commands.ts). Here, not in src/supervisor/, so the command line
 * knows it without loading the supervisor.
 */
export class StartRefused extends Data.TaggedError("StartRefused")<{ readonly message: string }> {}
