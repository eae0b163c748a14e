/**
 * The SQL of mta_sts_policies (migrations/0038_mta_sts.sql): one row per recipient domain, the
 * store every replica shares. Times are parameters from the caller's Clock.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PolicyMode } from "./policy.ts"

export interface PolicyRow {
  readonly domain: string
  readonly txt_id: string | null
  readonly policy_mode: PolicyMode | null
  readonly policy_mx: ReadonlyArray<string>
  readonly policy_max_age: number | null
  readonly policy_text: string | null
  readonly policy_txt_id: string | null
  readonly fetched_at: Date | null
  readonly policy_expires_at: Date | null
  readonly last_failure: string | null
  readonly retry_at: Date | null
  readonly tlsrpt_rua: ReadonlyArray<string>
  readonly checked_at: Date
}

export const makePolicyStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const read = (domain: string) =>
    Effect.map(sql<PolicyRow>`SELECT * FROM mta_sts_policies WHERE domain = ${domain}`, (rows) => rows[0])

  /** Writes the domain's row as decided (the arrays go as JSON: one text parameter each). */
  const save = (row: PolicyRow) =>
    sql`
      INSERT INTO mta_sts_policies (domain, txt_id, policy_mode, policy_mx, policy_max_age, policy_text, policy_txt_id, fetched_at,
        policy_expires_at, last_failure, retry_at, tlsrpt_rua, checked_at)
      VALUES (${row.domain}, ${row.txt_id}, ${row.policy_mode}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(row.policy_mx)}::jsonb)),
        ${row.policy_max_age}, ${row.policy_text}, ${row.policy_txt_id}, ${row.fetched_at}, ${row.policy_expires_at}, ${row.last_failure},
        ${row.retry_at}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(row.tlsrpt_rua)}::jsonb)), ${row.checked_at})
      ON CONFLICT (domain) DO UPDATE SET txt_id = excluded.txt_id, policy_mode = excluded.policy_mode, policy_mx = excluded.policy_mx,
        policy_max_age = excluded.policy_max_age, policy_text = excluded.policy_text, policy_txt_id = excluded.policy_txt_id,
        fetched_at = excluded.fetched_at, policy_expires_at = excluded.policy_expires_at, last_failure = excluded.last_failure,
        retry_at = excluded.retry_at, tlsrpt_rua = excluded.tlsrpt_rua, checked_at = excluded.checked_at`.pipe(Effect.asVoid)

  return { read, save } as const
})
