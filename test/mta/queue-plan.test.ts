/**
 * The claim plan with a long queue: 10,000 due deliveries inserted directly, then EXPLAIN
 * (FORMAT JSON) of the claim statement exactly as DeliveryQueue builds it (compiled by the Effect
 * SQL client, with its parameters). The due rows must be found through the partial index
 * deliveries_due, stopping after LIMIT rows — never a sequential scan of deliveries. A plan
 * assertion, not a timing.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// The queue tells bulk of its outcomes through ports (src/appliance.ts wires them).
import { PortsLive } from "../../src/appliance.ts"
import { DeliveryQueue } from "../../src/mta/queue/DeliveryQueue.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"

const QUEUED = 10_000

let app: Appliance

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

/** The SQL text and parameters of DeliveryQueue's claim, compiled without running it. */
const claimStatement = (limit: number, skipDomains: ReadonlyArray<string>) => {
  const now = new Date()
  const program = Effect.gen(function*() {
    const queue = yield* DeliveryQueue
    return queue.claim("plan-test", now, new Date(now.getTime() + 60_000), limit, skipDomains, "transactional").compile()
  })
  const layer = DeliveryQueue.Default.pipe(Layer.provide(PortsLive), Layer.provide(PgClient.layer({ url: Redacted.make(app.databaseUrl) })))
  return Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
}

const planOf = async (limit: number, skipDomains: ReadonlyArray<string>) => {
  const [text, params] = await claimStatement(limit, skipDomains)
  expect(text).toMatch(/FOR UPDATE SKIP LOCKED/)
  const rows = await query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(app.databaseUrl, `EXPLAIN (FORMAT JSON) ${text}`, params)
  return nodesOf(rows[0]!["QUERY PLAN"][0]!.Plan)
}

beforeAll(async () => {
  app = await startAppliance() // migrates the database; the MTA stays off, so the queue stays queued
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: { name: "plan", email: `plan-${Date.now()}@customers.test`, password: "correct horse battery" }
  })
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "plan" } })
  expect(key.status).toBe(201)
  const accountId: string = account.json.id
  const keyId: string = key.json.id
  await query(app.databaseUrl, `
    INSERT INTO messages (id, account_id, key_id, request_id, personalization_index, from_email, from_domain, subject, content, created_at)
    VALUES ('msg_plan', $1, $2, 'req_plan', 0, 'a@plan.example', 'plan.example', 'Plan', '{}'::jsonb, now())`, [accountId, keyId])
  // Due over the last hour, across 50 recipient domains.
  await query(app.databaseUrl, `
    INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind, state,
                            next_attempt_at, created_at, updated_at)
    SELECT 'dlv_plan_' || i, 'msg_plan', $1, $2, 'r' || i || '@d' || (i % 50) || '.example', 'd' || (i % 50) || '.example', 'to',
           CASE WHEN i % 5 = 0 THEN 'deferred' ELSE 'queued' END,
           now() - (i || ' milliseconds')::interval * 360, now(), now()
    FROM generate_series(1, $3) AS i`, [accountId, keyId, QUEUED])
  await query(app.databaseUrl, "ANALYZE deliveries")
  const [count] = await query<{ n: number }>(app.databaseUrl,
    "SELECT count(*)::int AS n FROM deliveries WHERE state IN ('queued', 'deferred')")
  expect(count!.n).toBe(QUEUED)
})
afterAll(() => app?.stop())

describe("the claim plan with 10,000 queued deliveries", () => {
  for (const [label, skip] of [["no paused destinations", []], ["two paused destinations", ["d1.example", "d2.example"]]] as const) {
    it(`finds due rows through the partial index deliveries_due, stopping at LIMIT (${label})`, async () => {
      const nodes = await planOf(100, skip)
      const due = nodes.filter((n) => n["Index Name"] === "deliveries_due")
      expect(due.length).toBe(1)
      expect(["Index Scan", "Index Only Scan"]).toContain(due[0]!["Node Type"])
      expect(nodes.some((n) => n["Node Type"] === "Limit")).toBe(true)
      expect(nodes.some((n) => n["Node Type"] === "LockRows")).toBe(true)
    })

    // The claimed ids are matched through the primary key (`id = ANY(ARRAY(…))`), not by joining a
    // subquery back to the table, which the planner turns into a hash join over a full scan.
    it(`reads no row of deliveries by a sequential scan (${label})`, async () => {
      const nodes = await planOf(100, skip)
      expect(nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "deliveries")).toEqual([])
    })
  }
})
