/**
 * The audit CSV export of a large account: BENCH_DELIVERIES (default 400,000) deliveries written
 * straight into PostgreSQL, then `GET /v1/mail/audit?format=csv` downloaded from the appliance
 * running with `npm start`'s heap cap. Prints rows, seconds, MB/s and the appliance's peak RSS
 * during the download, beside the same figures for the baseline: the appliance idle after start,
 * and a JSON page of 1,000 rows of the same account. Memory that grows with the row count (one
 * string of the whole export) shows as a peak far above the baseline, or as a dead appliance.
 */
import * as fs from "node:fs"
import { seedDeliveries } from "../test/support/audit-seed.ts"
import { benchPostgres, createDatabase, freePort, spawnNode, sql, table, waitFor } from "./lib.ts"

const DELIVERIES = Number(process.env["BENCH_DELIVERIES"] ?? 400_000)
const TOKEN = "hk_bench_audit_bootstrap_0123456789abcdef"

/** Samples a process's RSS every 50 ms; `peak()` answers the highest since the last `reset()`. */
const rssSampler = (pid: number) => {
  let peak = 0
  const sample = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)
      peak = Math.max(peak, kb / 1024)
    } catch {
      // gone
    }
  }
  const timer = setInterval(sample, 50)
  return {
    reset: () => {
      peak = 0
      sample()
    },
    peak: () => {
      sample()
      return peak
    },
    stop: () => clearInterval(timer)
  }
}

/** Downloads `url`, counting bytes and lines as they arrive (the bench keeps none of it). */
const download = async (url: string, token: string) => {
  const started = performance.now()
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  let bytes = 0
  let lines = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    for (const byte of chunk) if (byte === 10) lines += 1
  }
  return { status: res.status, bytes, lines, seconds: (performance.now() - started) / 1000 }
}

const pgRun = await benchPostgres()
try {
  const databaseUrl = await createDatabase(pgRun.adminUrl, "bench_audit")
  const port = await freePort()
  const child = spawnNode("src/main.ts", {
    DATABASE_URL: databaseUrl, HERALD_HTTP_PORT: String(port), HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(await freePort()), HERALD_BOOTSTRAP_KEY: TOKEN, HERALD_MTA_ENABLED: "false"
  })
  const exited = new Promise<number | null>((resolve) => child.process.once("exit", (code) => resolve(code)))
  try {
    await waitFor(`http://127.0.0.1:${port}/health`)
    const base = `http://127.0.0.1:${port}`
    const key = await fetch(`${base}/v1/client/keys`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ label: "audit bench" })
    }).then((r) => r.json() as Promise<{ id: string; token: string }>)
    const [owner] = await sql(databaseUrl, "SELECT account_id FROM api_keys WHERE id = $1", [key.id])
    const seedStart = performance.now()
    await seedDeliveries(databaseUrl, {
      accountId: String(owner?.["account_id"]), keyId: key.id, count: DELIVERIES, tag: "bench", base: new Date("2024-01-01T00:00:00Z")
    })
    await sql(databaseUrl, "ANALYZE messages; ANALYZE deliveries")
    console.log(`seeded ${DELIVERIES} deliveries in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)

    const rss = rssSampler(child.process.pid!)
    await new Promise((r) => setTimeout(r, 1_000))
    const idle = rss.peak()
    rss.reset()
    const page = await download(`${base}/v1/mail/audit?limit=1000`, key.token)
    const pagePeak = rss.peak()
    rss.reset()
    const csv = await download(`${base}/v1/mail/audit?format=csv`, key.token).catch((e: unknown) => ({
      status: `failed: ${e instanceof Error ? e.message : String(e)}`, bytes: 0, lines: 0, seconds: 0
    }))
    const csvPeak = rss.peak()
    rss.stop()
    // A heap exhausted mid-export kills the process: give its exit a moment to be seen.
    const alive = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 2_000))])
    table([
      { request: "appliance idle (baseline)", status: "-", rows: 0, MB: 0, seconds: 0, "MB/s": 0, "peak RSS MB": idle },
      {
        request: "JSON page, limit=1000 (baseline)", status: String(page.status), rows: 1000, MB: page.bytes / 1e6,
        seconds: page.seconds, "MB/s": page.bytes / 1e6 / page.seconds, "peak RSS MB": pagePeak
      },
      {
        request: "CSV export, every row", status: String(csv.status), rows: Math.max(0, csv.lines - 1), MB: csv.bytes / 1e6,
        seconds: csv.seconds, "MB/s": csv.seconds > 0 ? csv.bytes / 1e6 / csv.seconds : 0, "peak RSS MB": csvPeak
      }
    ])
    console.log(alive ? "the appliance is still running" : `the appliance died (exit ${await exited})`)
  } finally {
    await child.stop()
  }
} finally {
  await pgRun.stop()
}
