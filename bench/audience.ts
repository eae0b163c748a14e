/**
 * npm run bench:audience — the bulk audience at scale (issue 19 "Tests and benchmark"), against the
 * appliance started as `npm start` starts it (its heap cap), on DATABASE_URL's PostgreSQL when set
 * (the figures in the README: the dev server, `DATABASE_URL=postgres://postgres@127.0.0.1:54329/postgres`),
 * else on an embedded cluster (bench/lib.ts `benchPostgres`).
 *
 * 1. Import: BENCH_IMPORT_ROWS (100,000) contacts as one `text/csv` body (email, name, tags, two
 *    metadata columns) through `POST /v1/bulk/contacts/import`, timed from the first byte sent to
 *    the answer (BENCH_IMPORT_MB instead: as many such contacts as fit in that many MB, e.g. 15
 *    for the largest body MAX_JSON_MB admits), `/health` asked every 50 ms meanwhile (its slowest
 *    answer printed), and the CSV reader alone (csv-read.ts, as its worker runs it) timed in this
 *    process beside its deadline (HERALD_IMPORT_PARSE_TIMEOUT_S), beside the baseline: a bare `COPY … FROM STDIN` of the same rows (already in
 *    COPY's text form) into `bare_contacts`, a table made `LIKE contacts INCLUDING ALL` (the same
 *    columns and the same five indexes; no foreign keys), in the same database, run before and
 *    after the import (their mean is the baseline). Target: the import within 3× of bare COPY.
 *    A third COPY, into the same table with contacts' two foreign keys, shows what their per-row
 *    checks cost (Herald pays them; the baseline does not). Each row prints the CPU seconds of the
 *    database's server processes (and the appliance's): steadier than wall time on a shared machine.
 * 2. The appliance's RSS (VmRSS from /proc every 50 ms) just before the import and its peak
 *    during it. Target: less than 150 MB of growth.
 * 3. Segment preview: BENCH_SEGMENT_CONTACTS (1,000,000) contacts of another key and twice as
 *    many engagement rows, seeded with generate_series straight into the appliance's database
 *    (not measured), then `POST /v1/bulk/segments/preview` with `tag has t3` AND `engagement
 *    opened days 30`: one warm-up and BENCH_PREVIEW_RUNS (5) measured runs. Target: under 1 s.
 *    When the median misses it (or BENCH_EXPLAIN=1), the preview's own statement — captured by
 *    running the Segments service in this process with a statement transformer — is shown with
 *    EXPLAIN (ANALYZE, BUFFERS).
 * 4. Campaign freeze: a campaign to every contact of that key (a segment without rules), sent; the
 *    send's transaction freezes its recipients in one statement under HERALD_LONG_QUERY_TIMEOUT_MS.
 *    Printed beside that limit (issue 26: the long work's own limit, sized by this figure).
 * BENCH_SEGMENT_CONTACTS=0 skips parts 3 and 4. Prints figures; asserts nothing. The database is dropped at the end (BENCH_KEEP_DATABASE=1 keeps it).
 */
import * as fs from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { Statement } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { AppConfigLive } from "../src/config/app-config.ts"
import { Segments } from "../src/bulk/segments/Segments.ts"
import type { SegmentRules } from "../src/bulk/segments/rules.ts"
import { csvReadLimits } from "../src/bulk/contacts/csv-reader.ts"
import { readCsv } from "../src/bulk/contacts/csv-read.ts"
import { newId } from "../src/lib/ids.ts"
import { apiCaller, benchPostgres, createDatabase, freePort, spawnNode, sql, table, waitFor } from "./lib.ts"

const IMPORT_MB = process.env["BENCH_IMPORT_MB"] === undefined ? undefined : Number(process.env["BENCH_IMPORT_MB"])
const SEGMENT_CONTACTS = Number(process.env["BENCH_SEGMENT_CONTACTS"] ?? 1_000_000)
const ENGAGEMENT_ROWS = 2 * SEGMENT_CONTACTS
const PREVIEW_RUNS = Number(process.env["BENCH_PREVIEW_RUNS"] ?? 5)
const TOKEN = "hk_bench_audience_bootstrap_0123456789abcdef"

const RULES: SegmentRules = {
  match: "all",
  rules: [{ field: "tag", op: "has", value: "t3" }, { field: "engagement", op: "opened", days: 30 }]
}

/**
 * Samples a process's RSS every 50 ms; `peak()` answers the highest since the last `reset()`, and
 * `timeline()` the highest of each second since then (where the memory goes during the import).
 */
const rssSampler = (pid: number) => {
  let peak = 0
  let since = performance.now()
  let seconds: Array<number> = []
  const read = () => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024
    } catch {
      return 0 // gone
    }
  }
  const timer = setInterval(() => {
    const now = read()
    peak = Math.max(peak, now)
    const second = Math.floor((performance.now() - since) / 1000)
    seconds[second] = Math.max(seconds[second] ?? 0, now)
  }, 50)
  return {
    now: read,
    reset: () => {
      since = performance.now()
      seconds = []
      return (peak = read())
    },
    timeline: () => seconds.map((mb) => mb.toFixed(0)).join(" "),
    peak: () => (peak = Math.max(peak, read())),
    stop: () => clearInterval(timer)
  }
}

/** utime + stime of a process, in seconds, from /proc (0 once it is gone). */
const cpuSecondsOf = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

/**
 * Starts counting the CPU of the server processes serving `databaseUrl`'s database (the dev server
 * also serves other work, so not every postgres process); the function it answers gives the CPU
 * seconds they spent since, backends that connected meanwhile included. Slower than wall-clock
 * time to drift on a shared machine: the figure that says where a difference comes from.
 */
const databaseCpu = async (databaseUrl: string) => {
  const backends = async () => (await sql(databaseUrl, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    .map((r) => Number(r["pid"]))
  const before = new Map((await backends()).map((pid) => [pid, cpuSecondsOf(pid)]))
  return async (alsoPid?: number) => {
    const pids = new Set([...before.keys(), ...(await backends()), ...(alsoPid === undefined ? [] : [alsoPid])])
    return [...pids].reduce((sum, pid) => sum + cpuSecondsOf(pid) - (before.get(pid) ?? 0), 0)
  }
}

/** The import's rows: a quoted name with a comma, two tags, two metadata columns. */
const importRow = (i: number) => ({
  email: `Person${i}@Example${i % 97}.org`,
  name: `Doe, Jane ${i}`,
  tags: ["news", `tier${i % 5}`],
  plan: `plan${i % 3}`,
  city: `City ${i % 200}`
})

const csvLine = (i: number) => {
  const r = importRow(i)
  return `${r.email},"${r.name}",${r.tags.join(";")},${r.plan},${r.city}\n`
}

const CSV_HEADER = "email,name,tags,plan,city\n"

/** BENCH_IMPORT_ROWS, or as many rows as fit in BENCH_IMPORT_MB (MB of 2^20 bytes, as MAX_JSON_MB counts). */
const importRows = (): number => {
  if (IMPORT_MB === undefined) return Number(process.env["BENCH_IMPORT_ROWS"] ?? 100_000)
  let size = CSV_HEADER.length
  let rows = 0
  while (size + csvLine(rows).length <= IMPORT_MB * 1024 * 1024) size += csvLine(rows++).length
  return rows
}
const IMPORT_ROWS = importRows()

const csvBody = () => {
  const lines = [CSV_HEADER]
  for (let i = 0; i < IMPORT_ROWS; i++) lines.push(csvLine(i))
  return Buffer.from(lines.join(""))
}

/** `/health` asked every 50 ms until `stop()`; answers the slowest answer's milliseconds. */
const probeHealth = (base: string) => {
  let running = true
  let slowest = 0
  let answers = 0
  const done = (async () => {
    while (running) {
      const asked = performance.now()
      await fetch(`${base}/health`).then((r) => r.arrayBuffer()).catch(() => undefined)
      slowest = Math.max(slowest, performance.now() - asked)
      answers++
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  return async () => {
    running = false
    await done
    return { slowest, answers }
  }
}

/** The CSV reader's work on `body` in this thread (its worker runs the same function): wall and CPU seconds. */
const readerAlone = (body: Buffer) => {
  const cpu0 = process.cpuUsage()
  const started = performance.now()
  const result = readCsv(new Uint8Array(body), csvReadLimits(15 * 1024 * 1024), [], () => {})
  const cpu = process.cpuUsage(cpu0)
  return { ok: result.ok, seconds: (performance.now() - started) / 1000, cpu: (cpu.user + cpu.system) / 1e6 }
}

/** The same rows as COPY text lines for `bare_contacts` (ids made as Herald makes them). */
const copyChunks = (accountId: string, keyId: string) => {
  const at = new Date().toISOString()
  const chunks: Array<Buffer> = []
  let chunk: Array<string> = []
  for (let i = 0; i < IMPORT_ROWS; i++) {
    const r = importRow(i)
    const metadata = JSON.stringify({ plan: r.plan, city: r.city })
    chunk.push(`${newId("ct")}\t${accountId}\t${keyId}\t${r.email}\t${r.name}\t{${r.tags.join(",")}}\t${metadata}\t${at}\t${at}\n`)
    if (chunk.length === 1000) {
      chunks.push(Buffer.from(chunk.join("")))
      chunk = []
    }
  }
  if (chunk.length > 0) chunks.push(Buffer.from(chunk.join("")))
  return chunks
}

/**
 * `COPY … FROM STDIN` on a pg client without pg-copy-streams (not installed): a submittable that
 * sends the chunks when the server asks for them and settles at ReadyForQuery.
 */
const copyFrom = (client: pg.Client, text: string, chunks: ReadonlyArray<Buffer>) =>
  new Promise<void>((resolve, reject) => {
    let failure: unknown = null
    type Connection = { query: (t: string) => void; sendCopyFromChunk: (b: Buffer) => void; endCopyFrom: () => void }
    const submittable = {
      submit: (connection: Connection) => connection.query(text),
      handleCopyInResponse: (connection: Connection) => {
        for (const c of chunks) connection.sendCopyFromChunk(c)
        connection.endCopyFrom()
      },
      handleCommandComplete: () => undefined,
      handleError: (error: unknown) => (failure = error),
      handleReadyForQuery: () => (failure === null ? resolve() : reject(failure))
    }
    client.query(submittable as never)
  })

/** With `foreignKeys`, the table also gets contacts' two foreign keys (a figure beside the baseline, not the baseline). */
const bareCopy = async (databaseUrl: string, chunks: ReadonlyArray<Buffer>, foreignKeys = false) => {
  await sql(databaseUrl, "DROP TABLE IF EXISTS bare_contacts; CREATE TABLE bare_contacts (LIKE contacts INCLUDING ALL)")
  if (foreignKeys) {
    await sql(databaseUrl, `ALTER TABLE bare_contacts ADD FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE,
      ADD FOREIGN KEY (key_id) REFERENCES api_keys (id) ON DELETE CASCADE`)
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const [backend] = (await client.query("SELECT pg_backend_pid() AS pid")).rows as Array<{ pid: number }>
    const cpu0 = cpuSecondsOf(backend!.pid)
    const started = performance.now()
    await copyFrom(client, "COPY bare_contacts (id, account_id, key_id, email, name, tags, metadata, created_at, updated_at) FROM STDIN", chunks)
    return { seconds: (performance.now() - started) / 1000, pgCpu: cpuSecondsOf(backend!.pid) - cpu0 }
  } finally {
    await client.end()
  }
}

const seedSegmentAudience = async (databaseUrl: string, accountId: string, keyId: string) => {
  const started = performance.now()
  // 10 % carry t3; one in 50 unsubscribed; created over the last year.
  await sql(databaseUrl, `INSERT INTO contacts (id, account_id, key_id, email, name, status, tags, metadata, created_at, updated_at)
    SELECT 'ct_seg' || i, $1, $2, 'seg' || i || '@example' || (i % 97) || '.org', 'Seg ' || i,
      CASE WHEN i % 50 = 0 THEN 'unsubscribed' ELSE 'active' END,
      ARRAY['news', 't' || (i % 10)], jsonb_build_object('plan', 'plan' || (i % 3)),
      now() - (i % 365) * interval '1 day', now()
    FROM generate_series(1, $3::int) AS i`, [accountId, keyId, SEGMENT_CONTACTS])
  // Three opens to one click, spread over 90 days, on addresses scattered over the contacts;
  // every twentieth row a bounce (no key: a fact of the address from any channel).
  await sql(databaseUrl, `INSERT INTO contact_engagement (account_id, key_id, email, type, at, campaign_id)
    SELECT $1, CASE WHEN i % 20 = 0 THEN NULL ELSE $2 END, 'seg' || n || '@example' || (n % 97) || '.org',
      CASE WHEN i % 20 = 0 THEN 'bounced' WHEN i % 4 = 0 THEN 'clicked' ELSE 'opened' END,
      now() - ((i * 37) % 2160) * interval '1 hour', 'cp_bench'
    FROM (SELECT i, 1 + (i::bigint * 7919) % $3 AS n FROM generate_series(1, $4::int) AS i) s`,
  [accountId, keyId, SEGMENT_CONTACTS, ENGAGEMENT_ROWS])
  await sql(databaseUrl, "ANALYZE contacts; ANALYZE contact_engagement")
  return (performance.now() - started) / 1000
}

const preview = async (base: string, token: string) => {
  const started = performance.now()
  const res = await fetch(`${base}/v1/bulk/segments/preview`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ rules: RULES, limit: 10 })
  })
  const body = await res.json() as { total?: number; sendable?: number }
  return { seconds: (performance.now() - started) / 1000, status: res.status, total: body.total ?? -1, sendable: body.sendable ?? -1 }
}

/** The appliance's limit for the long bulk work (src/config/app-config.ts default unless set). */
const LONG_QUERY_TIMEOUT_MS = Number(process.env["HERALD_LONG_QUERY_TIMEOUT_MS"] ?? 300_000)

/**
 * A campaign to every contact of the key (a segment without rules), sent: the send's transaction
 * freezes the recipients in one statement (src/bulk/campaigns/freeze.ts), under
 * HERALD_LONG_QUERY_TIMEOUT_MS. The sender's domain is marked verified and the account's rate and
 * quota lifted, as bench/lib.ts `benchSender` does.
 */
const freezeAudience = async (base: string, token: string, databaseUrl: string) => {
  const call = apiCaller(base, token)
  await call("POST", "/v1/client/domains", { domain: "bench.example" })
  await sql(databaseUrl, "UPDATE domains SET verified_at = now()")
  await sql(databaseUrl, "UPDATE accounts SET rate_per_min_override = 100000000, monthly_quota_override = 100000000")
  const segment = await call("POST", "/v1/bulk/segments", { name: "everyone", rules: { match: "all", rules: [] } })
  const campaign = await call("POST", "/v1/bulk/campaigns", {
    name: "freeze", from_email: "news@bench.example", subject: "Freeze", body_text: "Hello", segment_id: segment["id"]
  })
  const pgCpu = await databaseCpu(databaseUrl)
  const started = performance.now()
  const res = await fetch(`${base}/v1/bulk/campaigns/${String(campaign["id"])}/send`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}"
  })
  const seconds = (performance.now() - started) / 1000
  const body = await res.json() as { total_contacts?: number }
  return { seconds, status: res.status, total: body.total_contacts ?? -1, pgCpu: await pgCpu() }
}

/** The preview's statement as Segments compiles it, run under EXPLAIN (ANALYZE, BUFFERS). */
const explainPreview = async (databaseUrl: string, owner: { accountId: string; keyId: string }) => {
  const captured: Array<readonly [string, ReadonlyArray<unknown>]> = []
  const capture = Statement.setTransformer((statement) => {
    captured.push(statement.compile())
    return Effect.succeed(statement)
  })
  await Effect.runPromise(Effect.flatMap(Segments, (s) => s.preview(owner, { rules: RULES, limit: 10 })).pipe(
    Effect.provide(Segments.Default.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(databaseUrl) })), Layer.provide(AppConfigLive), Layer.provide(capture))),
    Effect.scoped
  ))
  const [text, params] = captured.find(([t]) => t.includes("WITH matched")) ?? captured[captured.length - 1]!
  const rows = await sql(databaseUrl, `EXPLAIN (ANALYZE, BUFFERS) ${text}`, params)
  console.log(`\nthe preview's statement:\n${text}\nparameters: ${JSON.stringify(params)}\n`)
  for (const r of rows) console.log(r["QUERY PLAN"])
}

const pgRun = await benchPostgres()
try {
  const databaseUrl = await createDatabase(pgRun.adminUrl, "bench_audience")
  const port = await freePort()
  const child = spawnNode("src/main.ts", {
    DATABASE_URL: databaseUrl, HERALD_HTTP_PORT: String(port), HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(await freePort()), HERALD_BOOTSTRAP_KEY: TOKEN, HERALD_MTA_ENABLED: "false"
  })
  const rss = rssSampler(child.process.pid!)
  try {
    // A loaded machine (several engineers on 2 cores) has taken over a minute to start the appliance.
    await waitFor(`http://127.0.0.1:${port}/health`, 180_000)
    const base = `http://127.0.0.1:${port}`
    const newKey = (label: string) =>
      fetch(`${base}/v1/client/keys`, {
        method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ label })
      }).then((r) => r.json() as Promise<{ id: string; token: string }>)
    const importKey = await newKey("audience bench import")
    const [owner] = await sql(databaseUrl, "SELECT account_id FROM api_keys WHERE id = $1", [importKey.id])
    const accountId = String(owner?.["account_id"])

    // 1 and 2: bare COPY, Herald's import, bare COPY again.
    const body = csvBody()
    const chunks = copyChunks(accountId, importKey.id)
    const bareBefore = await bareCopy(databaseUrl, chunks)
    await new Promise((r) => setTimeout(r, 1_000))
    const rssBefore = rss.reset()
    const pgCpu = await databaseCpu(databaseUrl)
    const applianceCpu0 = cpuSecondsOf(child.process.pid!)
    const started = performance.now()
    const stopProbe = probeHealth(base)
    const res = await fetch(`${base}/v1/bulk/contacts/import`, {
      method: "POST", headers: { authorization: `Bearer ${importKey.token}`, "content-type": "text/csv" }, body
    })
    const answer = await res.json() as { created?: number; updated?: number; skipped?: number; invalid?: number }
    const heraldSeconds = (performance.now() - started) / 1000
    const health = await stopProbe()
    const rssPeak = rss.peak()
    const rssTimeline = rss.timeline()
    const herald = { seconds: heraldSeconds, pgCpu: await pgCpu(), applianceCpu: cpuSecondsOf(child.process.pid!) - applianceCpu0 }
    const bareAfter = await bareCopy(databaseUrl, chunks)
    const bareWithKeys = await bareCopy(databaseUrl, chunks, true)
    await sql(databaseUrl, "DROP TABLE bare_contacts")
    const bare = (bareBefore.seconds + bareAfter.seconds) / 2
    const [stored] = await sql(databaseUrl, "SELECT count(*)::int AS n FROM contacts WHERE key_id = $1", [importKey.id])

    console.log(`\nimport: ${IMPORT_ROWS} contacts, CSV body ${(body.length / 1e6).toFixed(1)} MB\n`)
    const row = (run: string, m: { seconds: number; pgCpu: number; applianceCpu?: number }) => ({
      run, seconds: m.seconds.toFixed(2), "rows/s": Math.round(IMPORT_ROWS / m.seconds),
      "PostgreSQL cpu s": m.pgCpu.toFixed(2), "appliance cpu s": m.applianceCpu === undefined ? "-" : m.applianceCpu.toFixed(2)
    })
    table([
      row("bare COPY FROM STDIN (before)", bareBefore),
      row("bare COPY FROM STDIN (after)", bareAfter),
      row("Herald POST /v1/bulk/contacts/import", herald),
      row("(bare COPY with contacts' 2 foreign keys)", bareWithKeys)
    ])
    console.log(`answer: ${res.status} ${JSON.stringify(answer)}; contacts stored: ${stored?.["n"]}`)
    console.log(`Herald / bare COPY (mean of both): ${(heraldSeconds / bare).toFixed(2)}× (target ≤ 3×)`)
    console.log(`/health during the import: slowest answer ${health.slowest.toFixed(0)} ms of ${health.answers}`)
    const reader = readerAlone(body)
    console.log(`CSV reader alone (csv-read.ts in this process): ${reader.ok ? "read" : "refused"} in ${reader.seconds.toFixed(2)} s, `
      + `${reader.cpu.toFixed(2)} s CPU (deadline HERALD_IMPORT_PARSE_TIMEOUT_S, default 60 s)`)
    console.log(`appliance RSS: ${rssBefore.toFixed(0)} MB before, ${rssPeak.toFixed(0)} MB peak during the import: `
      + `+${(rssPeak - rssBefore).toFixed(0)} MB (target < 150 MB)`)
    console.log(`appliance RSS each second of the import (MB, the highest sample): ${rssTimeline}`)

    // 3: the segment preview over a seeded audience of another key.
    if (SEGMENT_CONTACTS > 0) {
      const segmentKey = await newKey("audience bench segments")
      const seedSeconds = await seedSegmentAudience(databaseUrl, accountId, segmentKey.id)
      console.log(`\nsegment preview: seeded ${SEGMENT_CONTACTS} contacts and ${ENGAGEMENT_ROWS} engagement rows in ${seedSeconds.toFixed(1)} s (not measured)`)
      const warmUp = await preview(base, segmentKey.token)
      const runs = []
      for (let i = 0; i < PREVIEW_RUNS; i++) runs.push(await preview(base, segmentKey.token))
      const times = runs.map((r) => r.seconds).sort((a, b) => a - b)
      const median = times[Math.floor(times.length / 2)]!
      console.log(`rules: tag has t3 AND engagement opened days 30 → ${warmUp.status}, total ${warmUp.total}, sendable ${warmUp.sendable}`)
      console.log(`warm-up ${warmUp.seconds.toFixed(3)} s; runs ${runs.map((r) => r.seconds.toFixed(3)).join(", ")} s`)
      console.log(`median ${median.toFixed(3)} s (target < 1 s)`)
      if (median >= 1 || process.env["BENCH_EXPLAIN"] === "1") {
        await explainPreview(databaseUrl, { accountId, keyId: segmentKey.id })
      }

      // 4: the freeze of a campaign to that whole audience, the longest statement a request starts.
      const freeze = await freezeAudience(base, segmentKey.token, databaseUrl)
      console.log(`\ncampaign freeze: ${freeze.total} recipients of ${SEGMENT_CONTACTS} contacts frozen in ${freeze.seconds.toFixed(2)} s `
        + `(POST …/send → ${freeze.status}), PostgreSQL CPU ${freeze.pgCpu.toFixed(2)} s; `
        + `limit HERALD_LONG_QUERY_TIMEOUT_MS ${LONG_QUERY_TIMEOUT_MS} ms (${(LONG_QUERY_TIMEOUT_MS / 1000 / freeze.seconds).toFixed(1)}× this freeze)`)
    }
  } finally {
    rss.stop()
    await child.stop()
    // A million contacts take a gigabyte of a shared server's disk: gone unless asked to stay.
    if (process.env["BENCH_KEEP_DATABASE"] !== "1") await sql(pgRun.adminUrl, "DROP DATABASE IF EXISTS bench_audience")
  }
} finally {
  await pgRun.stop()
}
