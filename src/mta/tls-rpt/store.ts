/**
 * The SQL of TLS-RPT: the day's sessions per reporting domain (delivery_attempts' tls_* columns,
 * the domains whose `_smtp._tls` record has a `rua` in mta_sts_policies) and the tls_rpt_reports
 * row that makes one replica the sender of a domain's day. Times are parameters.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PolicyMode } from "../mta-sts/policy.ts"

export interface ReportingDomain {
  readonly domain: string
  readonly tlsrpt_rua: ReadonlyArray<string>
  readonly policy_mode: PolicyMode | null
  readonly policy_mx: ReadonlyArray<string>
  readonly policy_text: string | null
}

export interface SessionCount {
  readonly domain: string
  readonly host: string | null
  readonly tls_failure: string | null
  readonly mta_sts_mode: string | null
  readonly sessions: number
}

/** A day's scan of the attempts is a once-a-day read: bounded so a huge day cannot hold a connection. */
const DAY_SCAN_TIMEOUT_MS = 60_000

export const makeTlsRptStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Domains with TLS-RPT destinations and no report yet for the day starting at `start`. */
  const reportingDomains = (start: Date) =>
    sql<ReportingDomain>`
      SELECT p.domain, p.tlsrpt_rua, p.policy_mode, p.policy_mx, p.policy_text FROM mta_sts_policies p
      WHERE cardinality(p.tlsrpt_rua) > 0
        AND NOT EXISTS (SELECT 1 FROM tls_rpt_reports r WHERE r.policy_domain = p.domain AND r.day = ${start}::date)`

  /** The day's sessions to `domains`, by domain, MX host and result (delivery_attempts_tls_at). */
  const sessions = (domains: ReadonlyArray<string>, start: Date, end: Date) =>
    domains.length === 0 ? Effect.succeed([] as ReadonlyArray<SessionCount>) : sql.withTransaction(Effect.zipRight(
      sql.unsafe(`SET LOCAL statement_timeout = ${DAY_SCAN_TIMEOUT_MS}`),
      sql<SessionCount>`
      SELECT d.recipient_domain AS domain, a.host, a.tls_failure, a.mta_sts_mode, count(*)::int AS sessions
      FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
      WHERE a.at >= ${start} AND a.at < ${end} AND a.tls_verified IS NOT NULL AND d.recipient_domain IN ${sql.in(domains)}
      GROUP BY 1, 2, 3, 4`
    ))

  /** The domain's day for this replica to send: true for the one that inserted the row. */
  const claim = (domain: string, start: Date, reportId: string, destinations: ReadonlyArray<string>, now: Date) =>
    Effect.map(sql`
      INSERT INTO tls_rpt_reports (policy_domain, day, report_id, sent_at, destinations)
      VALUES (${domain}, ${start}::date, ${reportId}, ${now}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(destinations)}::jsonb)))
      ON CONFLICT DO NOTHING RETURNING policy_domain`, (rows) => rows.length > 0)

  const recordOutcome = (domain: string, start: Date, outcome: string) =>
    sql`UPDATE tls_rpt_reports SET outcome = ${outcome.slice(0, 2000)} WHERE policy_domain = ${domain} AND day = ${start}::date`.pipe(Effect.asVoid)

  return { reportingDomains, sessions, claim, recordOutcome } as const
})
