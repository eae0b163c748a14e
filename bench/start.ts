/**
 * How long Herald's command takes to answer, compiled (`bin/herald.mjs`, what `npm start` and
 * `npm run herald` run) beside the baseline measured in the same run: the sources under tsx, as
 * every start ran before the build. Runs are alternated so that a change in the machine's load
 * falls on both alike; each figure is the median of BENCH_START_RUNS (default 5) wall-clock times.
 *
 * - `--help`: the command line alone (target under 1 s).
 * - `accounts list`: an operator command on an existing data directory, which starts the
 *   embedded PostgreSQL, runs it and stops it (target under 2 s).
 * - a second start: `serve` on an existing data directory until `/health` answers 200, then
 *   SIGTERM (target under 2.5 s).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, repoRoot, table } from "./lib.ts"

const RUNS = Number(process.env["BENCH_START_RUNS"] ?? 5)

const ways = {
  compiled: [process.execPath, path.join(repoRoot, "bin/herald.mjs")],
  "tsx (before)": [process.execPath, "--import", "tsx", path.join(repoRoot, "src/main.ts")]
} as const
type Way = keyof typeof ways

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-start-"))
fs.chmodSync(dataDir, 0o755)

const environment = async () => ({
  PATH: process.env["PATH"] ?? "",
  HOME: process.env["HOME"] ?? "/tmp",
  HERALD_DATA_DIR: dataDir,
  HERALD_HTTP_HOST: "127.0.0.1",
  HERALD_HTTP_PORT: String(await freePort()),
  HERALD_SMTP_HOST: "127.0.0.1",
  HERALD_SMTP_PORT: String(await freePort()),
  HERALD_BOOTSTRAP_KEY: "hk_bench_start_bootstrap_0123456789abcdef",
  HERALD_LOG_LEVEL: "warn"
})

const launch = (way: Way, args: ReadonlyArray<string>, env: Record<string, string>): ChildProcess => {
  const [command, ...rest] = ways[way]
  return spawn(command, [...rest, ...args], { cwd: repoRoot, env, stdio: ["ignore", "ignore", "inherit"] })
}

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))

/** Milliseconds until the command exits (it must exit 0). */
const timeCommand = async (way: Way, args: ReadonlyArray<string>) => {
  const started = performance.now()
  const code = await exitOf(launch(way, args, await environment()))
  if (code !== 0) throw new Error(`${way} ${args.join(" ")} exited ${code}`)
  return performance.now() - started
}

/** Milliseconds from spawn until `/health` answers 200; the appliance is then stopped and awaited. */
const timeStart = async (way: Way) => {
  const env = await environment()
  const started = performance.now()
  const child = launch(way, ["serve"], env)
  const exited = exitOf(child)
  let elapsed = 0
  for (;;) {
    // Each question bounded: a start that hangs shows as a failed run, not as a bench that never ends.
    const ok = await fetch(`http://127.0.0.1:${env.HERALD_HTTP_PORT}/health`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false)
    if (ok) {
      elapsed = performance.now() - started
      break
    }
    if (performance.now() - started > 120_000) throw new Error(`${way}: /health not up in 120 s`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  child.kill("SIGTERM")
  await exited
  return elapsed
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const measure = async (name: string, run: (way: Way) => Promise<number>) => {
  const times: Record<Way, Array<number>> = { compiled: [], "tsx (before)": [] }
  for (let i = 0; i < RUNS; i++) {
    for (const way of Object.keys(ways) as Array<Way>) times[way].push(await run(way))
  }
  return (Object.keys(ways) as Array<Way>).map((way) => ({ what: name, how: way, "median s": median(times[way]) / 1000, "max s": Math.max(...times[way]) / 1000 }))
}

console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}, ${RUNS} runs each, alternated`)
// The first start makes the data directory (cluster, migrations, bootstrap): not measured.
await timeStart("compiled")
const rows = [
  ...(await measure("--help", (way) => timeCommand(way, ["--help"]))),
  ...(await measure("accounts list", (way) => timeCommand(way, ["accounts", "list"]))),
  ...(await measure("second start to /health", timeStart))
]
table(rows.map((row) => ({ ...row, "median s": Number(row["median s"].toFixed(2)), "max s": Number(row["max s"].toFixed(2)) })))
console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`)
fs.rmSync(dataDir, { recursive: true, force: true })
