/**
 * The step scheduler's claim with held steps ahead of the due ones: 5,000 subscriptions inserted
 * directly (2,000 due for hours but held — a quota hold — 500 due since, the rest not due or
 * ended), then EXPLAIN (ANALYZE, FORMAT JSON) of the claim statement exactly as
 * StepScheduler.runDue sends it (captured by a statement transformer while it claims nothing), in a
 * transaction rolled back. The due rows must come from the index sequence_subscriptions_eligible
 * without reading a held row (bench:sequences shows the same at 1,000,000 subscriptions).
 */
import { Statement } from "@effect/sql"
import { Effect } from "effect"
import pg from "pg"
import { beforeAll, describe, expect, it } from "vitest"
import { StepScheduler } from "../../src/bulk/sequences/StepScheduler.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"

const SEQUENCES = 5
const CONTACTS = 1_000
const HELD = 2_000
const DUE = 500

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Actual Rows"?: number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

let databaseUrl: string

beforeAll(async () => {
  // The services alone (they migrate the database): no scheduler actor runs to claim the seeded steps.
  databaseUrl = await freshDatabase()
  await Effect.runPromise(Effect.void.pipe(Effect.provide(servicesOn(databaseUrl))))
  await query(databaseUrl, "INSERT INTO accounts (id, name, email, password_hash, created_at) VALUES ('acct_plan', 'plan', 'plan@customers.test', 'x', now())")
  await query(databaseUrl, `INSERT INTO api_keys (id, account_id, label, token_hash, token_hint)
    VALUES ('key_plan', 'acct_plan', 'plan', '\\x00', '0000')`)
  const owner = ["acct_plan", "key_plan"]
  await query(databaseUrl, `INSERT INTO contacts (id, account_id, key_id, email, status, metadata, created_at, updated_at)
    SELECT 'ct_plan' || i, $1, $2, 'p' || i || '@plan.example', 'active', '{}'::jsonb, now(), now() FROM generate_series(1, $3::int) AS i`,
  [...owner, CONTACTS])
  await query(databaseUrl, `INSERT INTO sequences (id, account_id, key_id, name, status, step_seq, created_at, updated_at)
    SELECT 'sq_plan' || q, $1, $2, 'plan', 'active', 0, now(), now() FROM generate_series(1, $3::int) AS q`, [...owner, SEQUENCES])
  // Subscription i: the first HELD due two hours ago and more but held for an hour, the next DUE
  // due within the last hour, then every tenth completed and the rest due over the next days.
  await query(databaseUrl, `INSERT INTO sequence_subscriptions (id, sequence_id, account_id, key_id, contact_id, email, state,
      last_due_at, next_due_at, held_until, hold_reason, enrolled_at, updated_at)
    SELECT 'ss_plan' || i, 'sq_plan' || (1 + i / $3::int), $1, $2, 'ct_plan' || (1 + i % $3::int), 'p' || (1 + i % $3::int) || '@plan.example',
      CASE WHEN i >= $4::int + $5::int AND i % 10 = 0 THEN 'completed' ELSE 'active' END, now(),
      CASE WHEN i < $4::int THEN now() - interval '2 hours' - i * interval '1 second'
        WHEN i < $4::int + $5::int THEN now() - i * interval '1 second'
        WHEN i % 10 = 0 THEN NULL
        ELSE now() + i * interval '1 minute' END,
      CASE WHEN i < $4::int THEN now() + interval '1 hour' END, CASE WHEN i < $4::int THEN 'quota_exhausted' END, now(), now()
    FROM generate_series(0, $6::int - 1) AS i`, [...owner, CONTACTS, HELD, DUE, SEQUENCES * CONTACTS])
  await query(databaseUrl, "ANALYZE sequence_subscriptions")
})

describe("the step scheduler's claim with 2,000 held steps ahead of 500 due ones", () => {
  it("reads the due steps through sequence_subscriptions_eligible without reading a held one", async () => {
    const captured: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const capture = Statement.setTransformer((statement) => {
      captured.push(statement.compile())
      return Effect.succeed(statement)
    })
    // Due before 1970: the claim runs and claims nothing.
    await Effect.runPromise(Effect.flatMap(StepScheduler, (s) => s.runDue(new Date(0), 50)).pipe(Effect.provide(capture), Effect.provide(servicesOn(databaseUrl))))
    const claim = captured.find(([text]) => text.includes("FROM sequence_subscriptions s") && text.includes("SKIP LOCKED"))
    expect(claim).toBeDefined()
    const now = new Date()
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      await client.query("BEGIN")
      const [row] = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${claim![0]}`, claim![1].map((p) => (p instanceof Date ? now : p)))).rows
      await client.query("ROLLBACK")
      const nodes = nodesOf(row["QUERY PLAN"][0].Plan)
      const scan = nodes.find((n) => n["Index Name"] === "sequence_subscriptions_eligible")
      // At this size the planner may take the due rows as a bitmap and sort them (at 1,000,000, an
      // index scan stopping at LIMIT): either way the index hands over due rows only, never a held one.
      expect(["Index Scan", "Bitmap Index Scan"]).toContain(scan?.["Node Type"])
      expect(scan!["Actual Rows"]).toBeGreaterThanOrEqual(50)
      expect(scan!["Actual Rows"]).toBeLessThanOrEqual(DUE)
      expect(nodes.every((n) => (n["Rows Removed by Filter"] ?? 0) === 0)).toBe(true)
      expect(nodes.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "sequence_subscriptions")).toBe(false)
    } finally {
      await client.end()
    }
  })
})
