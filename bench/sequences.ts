/**
 * npm run bench:sequences — issue 21's sequence benchmark, against one appliance started as
 * `npm start` starts it (its heap cap), with the MTA on, delivering into a local SMTP sink (in this
 * process, counting and discarding), on DATABASE_URL's PostgreSQL when set, else an embedded one.
 *
 * 1. Delivery: BENCH_SUBSCRIPTIONS (20,000; a smaller count for trial runs) subscriptions whose
 *    first step falls due at once — contacts and a list seeded with SQL, a sequence with two steps
 *    (the second a day later, so never due here) created through the API, the list enrolled through
 *    `POST /v1/bulk/sequences/{id}/enroll` (again while `truncated`: HERALD_ENROLL_CAP, 10,000 by
 *    default, per call) — drained by the step scheduler and the MTA, each step rendered per contact
 *    at delivery (src/mta/compose/compose.ts `composeReference`). Beside it, in the same run and
 *    appliance, a campaign to as many contacts of another list with the same content, before and
 *    after the sequence (the mean is the baseline: this VM's speed drifts within minutes). Rates are
 *    delivered/s from the first to the last message the sink received in the phase. Target: the
 *    sequence ≥ 90 % of the campaign rate.
 * 2. The scheduler's claim at scale: the appliance stopped, BENCH_PLAN_SUBSCRIPTIONS (1,000,000)
 *    subscriptions seeded with generate_series over the same contacts and as many sequences as
 *    needed (most not due, some held, some due, some paused or ended), then the claim statement —
 *    captured from StepScheduler.runDue itself by a statement transformer, not copied — run under
 *    EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back.
 *
 * Also printed per phase: the appliance's and PostgreSQL's CPU per message, and its peak RSS.
 * Prints figures; asserts nothing. The database is dropped at the end (BENCH_KEEP_DATABASE=1 keeps it).
 */
import { Statement } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import pg from "pg"
import { BaseLive, ServicesLive } from "../src/appliance.ts"
import { StepScheduler } from "../src/bulk/sequences/StepScheduler.ts"
import { apiCaller, benchPostgres, benchSender, cpuMeter, createDatabase, spawnDeliveringAppliance, sql, startCountingSink, startSinkDns, table, waitFor } from "./lib.ts"

const N = Number(process.env["BENCH_SUBSCRIPTIONS"] ?? 20_000)
const PLAN_SUBSCRIPTIONS = Number(process.env["BENCH_PLAN_SUBSCRIPTIONS"] ?? 1_000_000)
const TOKEN = "hrld_bench_token_0123456789abcdef"

/** ~5 KB, as bench/outbound.ts and bench/campaign.ts send; the same content for the campaign and the step. */
const BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(85)
const SUBJECT = "News for {{ name }}"
const TEXT = `Hello {{ name }}\n\n${BODY}`
const HTML = `<html><body><p>Hello {{ name }}</p><p><a href="https://shop.example/pricing">Pricing</a> · ` +
  `<a href="https://shop.example/blog?a=1&b=2">Blog</a></p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p></body></html>`

// The sink: counts messages and when each arrived, discards them.
const sink = await startCountingSink()

/** Waits for `count` more messages than `from`; answers delivered/s from the first of them to the last. */
const drained = async (from: number, count: number) => {
  while (sink.arrivals.length < from + count) await new Promise((r) => setTimeout(r, 20))
  const first = sink.arrivals[from]!
  const last = sink.arrivals[from + count - 1]!
  return { seconds: (last - first) / 1000, rate: (count - 1) / ((last - first) / 1000) }
}

/** The claim statement exactly as StepScheduler.runDue compiles it, captured while it claims nothing (due before 1970). */
const captureClaim = async (databaseUrl: string) => {
  const captured: Array<readonly [string, ReadonlyArray<unknown>]> = []
  const capture = Statement.setTransformer((statement) => {
    captured.push(statement.compile())
    return Effect.succeed(statement)
  })
  const config = ConfigProvider.fromMap(new Map([["DATABASE_URL", databaseUrl], ["HERALD_LOG_LEVEL", "warn"], ["HERALD_HOSTNAME", "mta.bench"]]))
  await Effect.runPromise(Effect.flatMap(StepScheduler, (s) => s.runDue(new Date(0))).pipe(
    Effect.provide(capture),
    Effect.provide(ServicesLive.pipe(Layer.provideMerge(BaseLive), Layer.provide(Layer.setConfigProvider(config)))),
    Effect.scoped
  ))
  const claim = captured.find(([text]) => /FROM sequence_subscriptions s\b/.test(text) && text.includes("SKIP LOCKED"))
  if (claim === undefined) throw new Error(`the claim statement was not captured (${captured.length} statements)`)
  return claim
}

/** EXPLAIN (ANALYZE, BUFFERS) of the claim at `now`, in a transaction rolled back (it locks rows). */
const claimPlan = async (databaseUrl: string, claim: readonly [string, ReadonlyArray<unknown>], now: Date) => {
  const [text, params] = claim
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query("BEGIN")
    const values = params.map((p) => (p instanceof Date ? now : p))
    const rows = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values)).rows
    await client.query("ROLLBACK")
    return { text, values, plan: rows.map((r) => r["QUERY PLAN"]) }
  } finally {
    await client.end()
  }
}

const dns = await startSinkDns()
const pgRun = await benchPostgres()
const databaseUrl = await createDatabase(pgRun.adminUrl, "bench_sequences")
const herald = await spawnDeliveringAppliance({
  databaseUrl, token: TOKEN, dnsAddress: dns.address, mxPort: sink.port,
  ...(process.env["HERALD_ENROLL_CAP"] === undefined ? {} : { env: { HERALD_ENROLL_CAP: process.env["HERALD_ENROLL_CAP"] } })
})
const base = herald.base
let stopped = false
try {
  await waitFor(`${base}/health`)
  const call = apiCaller(base, TOKEN)
  const key = await benchSender(call, databaseUrl)
  const campaignList = await call("POST", "/v1/bulk/lists", { name: "campaign audience" })
  const sequenceList = await call("POST", "/v1/bulk/lists", { name: "sequence audience" })

  // The audiences, seeded straight into the database (not measured): N contacts on each list.
  const seedStarted = performance.now()
  for (const [prefix, list] of [["cc", campaignList], ["sc", sequenceList]] as const) {
    await sql(databaseUrl, `INSERT INTO contacts (id, account_id, key_id, email, name, status, metadata, created_at, updated_at)
      SELECT 'ct_' || $4 || i, $1, $2, $4 || i || '@dest.example', 'Contact ' || i, 'active', jsonb_build_object('plan', 'plan' || (i % 3)),
        now() - i * interval '1 second', now()
      FROM generate_series(1, $3::int) AS i`, [key!["account_id"], key!["id"], N, prefix])
    await sql(databaseUrl, `INSERT INTO list_memberships (list_id, contact_id, status, created_at, confirmed_at)
      SELECT $1, id, 'confirmed', now(), now() FROM contacts WHERE id LIKE 'ct_' || $2 || '%'`, [list["id"], prefix])
  }
  await sql(databaseUrl, "ANALYZE contacts; ANALYZE list_memberships")
  console.log(`seeded ${2 * N} contacts on two lists in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (not measured)`)

  const campaignRun = async (label: string) => {
    const campaign = await call("POST", "/v1/bulk/campaigns", {
      name: label, subject: SUBJECT, body_text: TEXT, html: HTML, from_email: "news@bench.example", from_name: "Bench", list_ids: [campaignList["id"]]
    })
    const from = sink.arrivals.length
    const meter = cpuMeter(herald)
    const sending = await call("POST", `/v1/bulk/campaigns/${String(campaign["id"])}/send`)
    const total = Number(sending["total_contacts"])
    const result = await drained(from, total)
    return { ...result, count: total, ...meter(total) }
  }

  const campaignBefore = await campaignRun("bench campaign (before)")
  console.log(`campaign before: ${campaignBefore.rate.toFixed(1)}/s`)

  // The sequence: two steps, the first due at enrolment, the second a day later (not due here).
  const sequence = await call("POST", "/v1/bulk/sequences", { name: "bench sequence", from_email: "news@bench.example", from_name: "Bench" })
  const sequenceId = String(sequence["id"])
  await call("POST", `/v1/bulk/sequences/${sequenceId}/steps`, { offset_seconds: 0, subject: SUBJECT, body_text: TEXT, html: HTML })
  await call("POST", `/v1/bulk/sequences/${sequenceId}/steps`, { offset_seconds: 86_400, subject: `Again: ${SUBJECT}`, body_text: TEXT, html: HTML })
  const from = sink.arrivals.length
  const meter = cpuMeter(herald)
  const enrolStarted = performance.now()
  let enrolled = 0
  let calls = 0
  for (;;) {
    const answer = await call("POST", `/v1/bulk/sequences/${sequenceId}/enroll`, { list_id: sequenceList["id"] })
    enrolled += Number(answer["enrolled"])
    calls += 1
    if (answer["truncated"] !== true) break
  }
  const enrolSeconds = (performance.now() - enrolStarted) / 1000
  const sequenceResult = { ...(await drained(from, enrolled)), count: enrolled, ...meter(enrolled) }
  const sequenceRss = herald.peakRssMb()
  const [sentRows] = await sql(databaseUrl, "SELECT count(*)::int AS n FROM sequence_step_sends")

  const campaignAfter = await campaignRun("bench campaign (after)")
  await herald.stop()
  stopped = true

  const campaignRate = (campaignBefore.rate + campaignAfter.rate) / 2
  console.log(`\nsequence benchmark: ${enrolled} subscriptions due at once beside a campaign to ${N} contacts, ~5 KB text + html each, DKIM RSA-2048, to a local SMTP sink\n`)
  const row = (phase: string, r: { count: number; seconds: number; rate: number; cpuMs: number; pgCpuMs: number }) =>
    ({ phase, messages: r.count, "first→last s": r.seconds, "delivered/s": r.rate, "ms CPU/msg": r.cpuMs, "PG ms CPU/msg": r.pgCpuMs })
  table([
    row("campaign (before)", campaignBefore),
    row("sequence step 1 (enrol → scheduler → MTA)", sequenceResult),
    row("campaign (after)", campaignAfter)
  ])
  console.log(`\nenrolled ${enrolled} in ${calls} call(s), ${enrolSeconds.toFixed(2)} s; step sends recorded: ${sentRows?.["n"]}; appliance peak RSS ${sequenceRss.toFixed(0)} MB`)
  console.log(`sequence delivered/s ÷ campaign (mean of ${campaignBefore.rate.toFixed(1)} and ${campaignAfter.rate.toFixed(1)}/s): ` +
    `${((sequenceResult.rate / campaignRate) * 100).toFixed(1)} % (target ≥ 90 %)`)

  // 2. The claim at scale.
  const seedPlanStarted = performance.now()
  const [{ n: contactCount } = { n: 0 }] = await sql(databaseUrl, "SELECT count(*)::int AS n FROM contacts") as Array<{ n: number }>
  const sequenceCount = Math.ceil(PLAN_SUBSCRIPTIONS / contactCount)
  await sql(databaseUrl, `INSERT INTO sequences (id, account_id, key_id, name, status, from_email, step_seq, created_at, updated_at)
    SELECT 'sq_plan' || q, $1, $2, 'plan ' || q, 'active', 'news@bench.example', 1, now(), now() FROM generate_series(1, $3::int) AS q`,
  [key!["account_id"], key!["id"], sequenceCount])
  await sql(databaseUrl, `INSERT INTO sequence_steps (sequence_id, id, position, offset_seconds, subject, body_text, created_at, updated_at)
    SELECT 'sq_plan' || q, 1, 1, 0, 'Plan', 'Plan', now(), now() FROM generate_series(1, $1::int) AS q`, [sequenceCount])
  // Per subscription i: 1 in 10 completed, 1 in 50 cancelled, 1 in 50 paused; of the active ones,
  // 1 in 100 held (due for two hours and more, held for an hour more: a quota hold ahead of everything
  // due since), 1 in 200 due within the last hour, 1 in 20 waiting to finish (every step queued),
  // the rest due over the next 30 days.
  await sql(databaseUrl, `INSERT INTO sequence_subscriptions (id, sequence_id, account_id, key_id, contact_id, email, state, reason,
      last_step_id, last_due_at, next_due_at, held_until, hold_reason, enrolled_at, updated_at, finished_at)
    SELECT 'ss_plan' || i, 'sq_plan' || (1 + i / $3), $1, $2, c.id, c.email, k.state,
      CASE k.state WHEN 'cancelled' THEN 'manual' END,
      NULL, now() - interval '1 day',
      CASE WHEN k.state <> 'active' OR k.kind = 'finishing' THEN NULL
        WHEN k.kind = 'held' THEN now() - interval '2 hours' - (i % 3600) * interval '1 second'
        WHEN k.kind = 'due' THEN now() - (i % 3600) * interval '1 second'
        ELSE now() + (i % 43200) * interval '1 minute' END,
      CASE WHEN k.kind = 'held' THEN now() + interval '1 hour' END,
      CASE WHEN k.kind = 'held' THEN 'quota_exhausted' END,
      now() - interval '1 day', now(), CASE WHEN k.state IN ('completed', 'cancelled') THEN now() END
    FROM generate_series(0, $4::int - 1) AS i
    JOIN (SELECT id, email, (row_number() OVER (ORDER BY id))::int - 1 AS n FROM contacts) c ON c.n = i % $3
    CROSS JOIN LATERAL (SELECT
      CASE WHEN i % 10 = 1 THEN 'completed' WHEN i % 50 = 2 THEN 'cancelled' WHEN i % 50 = 3 THEN 'paused' ELSE 'active' END AS state,
      CASE WHEN i % 100 = 4 THEN 'held' WHEN i % 200 = 5 THEN 'due' WHEN i % 20 = 6 THEN 'finishing' ELSE 'waiting' END AS kind) k`,
  [key!["account_id"], key!["id"], contactCount, PLAN_SUBSCRIPTIONS])
  await sql(databaseUrl, "ANALYZE sequences; ANALYZE sequence_steps; ANALYZE sequence_subscriptions")
  const census = await sql(databaseUrl, `SELECT CASE WHEN state <> 'active' THEN state WHEN next_due_at IS NULL THEN 'active, every step queued'
      WHEN held_until > now() THEN 'active, due but held' WHEN next_due_at <= now() THEN 'active, due' ELSE 'active, not due' END AS kind,
      count(*)::int AS n
    FROM sequence_subscriptions GROUP BY 1 ORDER BY 2 DESC`)
  console.log(`\nclaim at scale: seeded ${PLAN_SUBSCRIPTIONS} subscriptions over ${sequenceCount} sequences in ${((performance.now() - seedPlanStarted) / 1000).toFixed(1)} s (not measured)`)
  console.log(census.map((r) => `  ${r["kind"]}: ${r["n"]}`).join("\n"))
  const claim = await captureClaim(databaseUrl)
  const explained = await claimPlan(databaseUrl, claim, new Date())
  console.log(`\nthe claim statement (captured from StepScheduler.runDue):\n${explained.text.trim()}\nparameters: ${JSON.stringify(explained.values)}\n`)
  console.log("EXPLAIN (ANALYZE, BUFFERS), rolled back:\n" + explained.plan.map((l) => `  ${l}`).join("\n"))
} finally {
  if (!stopped) await herald.stop()
  if (process.env["BENCH_KEEP_DATABASE"] !== "1") await sql(pgRun.adminUrl, "DROP DATABASE IF EXISTS bench_sequences").catch(() => undefined)
  await pgRun.stop()
  await dns.close()
  sink.close()
}
