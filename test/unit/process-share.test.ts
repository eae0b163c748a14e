/**
 * HERALD_PROCESSES=auto and each process's share of the limits (src/config/process-share.ts),
 * decided from fake cgroup files in a temporary directory: v2's cpu.max and memory.max, v1's
 * cpu.cfs_quota_us / cpu.cfs_period_us and memory.limit_in_bytes, HERALD_MEMORY_MB over both.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { perProcessLimits } from "../../src/config/app-config.ts"
import {
  autoProcesses,
  embeddedMaxConnections,
  PER_PROCESS_MIN_MB,
  readHostFacts,
  resolveProcesses,
  shareOf,
  workerHeapMb
} from "../../src/config/process-share.ts"
import { restartDelayMs } from "../../src/supervisor/supervisor.ts"

const GB = 1024 ** 3

/** A cgroup directory with `files` (relative path → contents), read as this host would read its own. */
const cgroup = (files: Record<string, string>, env: Record<string, string> = {}) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "herald-cgroup-"))
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  // The host's CPUs and memory are this machine's; tests pin them to read the cgroup's part alone.
  return { ...readHostFacts(root, env), cpus: 64, totalMemoryBytes: 256 * GB }
}

describe("HERALD_PROCESSES=auto", () => {
  it("takes the cgroup v2 CPU quota: --cpus=2 on a 64-core host starts 2", () => {
    expect(autoProcesses(cgroup({ "cpu.max": "200000 100000\n", "memory.max": "max\n" }))).toBe(2)
    expect(autoProcesses(cgroup({ "cpu.max": "150000 100000\n" }))).toBe(1)
    expect(autoProcesses(cgroup({ "cpu.max": "max 100000\n", "memory.max": "max\n" }))).toBe(64)
  })

  it("takes the cgroup v1 quota and period", () => {
    expect(autoProcesses(cgroup({ "cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n" }))).toBe(4)
    expect(autoProcesses(cgroup({ "cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n" }))).toBe(64)
  })

  it("starts no more processes than the memory holds of PER_PROCESS_MIN_MB", () => {
    expect(autoProcesses(cgroup({ "memory.max": `${GB}\n` }))).toBe(Math.floor(1024 / PER_PROCESS_MIN_MB))
    expect(autoProcesses(cgroup({ "memory/memory.limit_in_bytes": `${2 * GB}\n` }))).toBe(Math.floor(2048 / PER_PROCESS_MIN_MB))
    // v1's "unlimited" is a huge number: the machine's memory counts.
    expect(autoProcesses(cgroup({ "memory/memory.limit_in_bytes": "9223372036854771712\n" }))).toBe(64)
    // HERALD_MEMORY_MB is the operator's word over the cgroup's.
    expect(autoProcesses(cgroup({ "memory.max": `${8 * GB}\n` }, { HERALD_MEMORY_MB: "512" }))).toBe(2)
    // Never fewer than one.
    expect(autoProcesses(cgroup({ "memory.max": `${100 * 1024 * 1024}\n` }))).toBe(1)
  })

  it("resolves HERALD_PROCESSES: unset is 1 (no supervisor), a number as given, anything else refused in one line", () => {
    const facts = cgroup({ "cpu.max": "300000 100000\n" })
    expect(resolveProcesses(undefined, facts)).toEqual({ _tag: "Resolved", processes: 1, auto: false })
    expect(resolveProcesses("4", facts)).toEqual({ _tag: "Resolved", processes: 4, auto: false })
    expect(resolveProcesses(" AUTO ", facts)).toEqual({ _tag: "Resolved", processes: 3, auto: true })
    for (const bad of ["0", "-2", "two", "1.5", "999"]) {
      const refused = resolveProcesses(bad, facts)
      expect(refused._tag).toBe("Refused")
      if (refused._tag === "Refused") expect(refused.line).toMatch(/^herald: HERALD_PROCESSES must be auto or a whole number from 1 to 256, not /)
    }
    expect(resolveProcesses("auto", cgroup({}, { HERALD_MEMORY_MB: "lots" }))._tag).toBe("Refused")
  })
})

describe("each process's share of the appliance's limits", () => {
  const limits = {
    dbPoolMax: 10, exportPoolMax: 3, httpBodyBudgetBytes: 32 * 1_048_576, smtpInboundBudgetBytes: 64 * 1_048_576,
    smtpMaxClients: 200, smtpMaxPerIp: 20, renderWorkers: 7, importWorkers: 2
  }

  it("keeps one process's limits whole", () => {
    expect(perProcessLimits(limits, shareOf(1))).toEqual(limits)
  })

  it("divides each limit by N, at least 1, and the pool as max(2, ⌈pool ÷ N⌉)", () => {
    expect(perProcessLimits(limits, shareOf(4))).toEqual({
      dbPoolMax: 3, exportPoolMax: 1, httpBodyBudgetBytes: 8 * 1_048_576, smtpInboundBudgetBytes: 16 * 1_048_576,
      smtpMaxClients: 50, smtpMaxPerIp: 5, renderWorkers: 1, importWorkers: 1
    })
    expect(perProcessLimits(limits, shareOf(64)).dbPoolMax).toBe(2)
    expect(perProcessLimits(limits, shareOf(64)).smtpMaxPerIp).toBe(1)
  })

  it("sizes the embedded PostgreSQL for N processes (never below one process's 200)", () => {
    expect(embeddedMaxConnections(1, 10, 3)).toBe(200)
    // 64 × (pool 2 + export 1 + listener 1) + 20.
    expect(embeddedMaxConnections(64, 10, 3)).toBe(276)
    expect(embeddedMaxConnections(32, 100, 3)).toBe(32 * (4 + 1 + 1) + 20)
  })

  it("divides the V8 heap cap, at least 128 MB, and leaves V8's default when there is none", () => {
    expect(workerHeapMb(2, ["--max-old-space-size=512"], undefined)).toBe(256)
    expect(workerHeapMb(8, [], "--max-old-space-size=512")).toBe(128)
    expect(workerHeapMb(2, ["--max-old-space-size=4096"], "--max-old-space-size=512")).toBe(2048)
    expect(workerHeapMb(2, [], undefined)).toBeUndefined()
  })

  it("backs a crashing worker's restarts off from 1 s to 30 s, back to 1 s after a minute's run", () => {
    let delay: number | undefined
    const seen = []
    for (let i = 0; i < 7; i++) seen.push(delay = restartDelayMs(delay, 500))
    expect(seen).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
    expect(restartDelayMs(30000, 61_000)).toBe(1000)
  })
})
