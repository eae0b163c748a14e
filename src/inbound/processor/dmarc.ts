/**
 * Storing DMARC aggregate reports and the alignment alert.
 *
 * A report belongs to every account that verified its policy domain — and still holds it: the TXT
 * record is there, or vanished less than the domain grace (HERALD_DOMAIN_GRACE_HOURS) ago, as for
 * sending (records.ts sendingAllowed). Registering a domain proves nothing: anyone can, and the
 * reports tell who sends mail as the domain, from where, and whether it passes. Deduplicated per
 * account by (org_name, report_id): receivers resend reports, and a copy must not count twice.
 *
 * `dmarc.alignment_failure` (once per domain and window, not per report): over the reports of the
 * domain whose period ends within `windowDays` before the new report's end, the failing share is
 * the messages whose policy-evaluated DKIM and SPF both failed (DMARC passes when either aligned
 * mechanism passes, RFC 7489 §3). Past `dmarcFailThreshold` with at least `dmarcMinVolume`
 * messages, one event goes to every key of the account that has a webhook. Windows are aligned
 * to multiples of `windowDays` since the epoch, so replicas agree on which window an alert is in
 * and the primary key of dmarc_alerts makes the event exactly-once.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { DmarcAlignmentFailure } from "../../events/schema.ts"
import type { InboundSettings } from "../InboundConfig.ts"
import type { DmarcReport } from "../parse/types.ts"

export interface DmarcContext {
  readonly inboundId: string
  readonly settings: InboundSettings
  readonly now: Date
}

/** Stores each report for the accounts owning its domain; returns how many rows were new. */
export const storeDmarcReports = (reports: ReadonlyArray<DmarcReport>, ctx: DmarcContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let stored = 0
    for (const report of reports) {
      const domain = report.domain.toLowerCase()
      const graceStart = new Date(ctx.now.getTime() - ctx.settings.domainGraceHours * 3_600_000)
      const owners = yield* sql<{ account_id: string }>`
        SELECT DISTINCT account_id FROM domains
        WHERE domain = ${domain} AND verified_at IS NOT NULL
          AND (verification_lost_at IS NULL OR verification_lost_at > ${graceStart})`
      for (const { account_id } of owners) {
        const inserted = yield* sql<{ id: string }>`
          INSERT INTO dmarc_reports (account_id, domain, org_name, report_id, date_begin, date_end, policy_p, messages,
            inbound_message_id, created_at)
          VALUES (${account_id}, ${domain}, ${report.org_name}, ${report.report_id}, ${report.date_begin}, ${report.date_end},
            ${report.policy_p}, ${Math.min(report.messages, 2_147_483_647)}, ${ctx.inboundId}, ${ctx.now})
          ON CONFLICT (account_id, org_name, report_id) DO NOTHING
          RETURNING id`
        const row = inserted[0]
        if (row === undefined) continue
        stored += 1
        // One INSERT per 1,000 records keeps a 900 KB report to a handful of statements.
        for (let i = 0; i < report.rows.length; i += 1000) {
          const chunk = report.rows.slice(i, i + 1000).map((r) => ({
            report_id: row.id,
            source_ip: r.source_ip,
            count: Math.min(r.count, 2_147_483_647), // an integer column; absurd counts are clamped, not refused
            disposition: r.disposition,
            dkim: r.dkim,
            spf: r.spf,
            header_from: r.header_from
          }))
          yield* sql`INSERT INTO dmarc_records ${sql.insert(chunk)}`
        }
        yield* alertIfFailing(account_id, domain, report, ctx)
      }
    }
    return stored
  })

const alertIfFailing = (accountId: string, domain: string, report: DmarcReport, ctx: DmarcContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const windowSeconds = ctx.settings.dmarcWindowDays * 86_400
    const from = report.date_end - windowSeconds
    const [totals] = yield* sql<{ volume: number; failing: number }>`
      SELECT coalesce(sum(c.count), 0)::int AS volume,
        coalesce(sum(c.count) FILTER (WHERE coalesce(c.dkim, '') <> 'pass' AND coalesce(c.spf, '') <> 'pass'), 0)::int AS failing
      FROM dmarc_reports r JOIN dmarc_records c ON c.report_id = r.id
      WHERE r.account_id = ${accountId} AND r.domain = ${domain} AND r.date_end > ${from} AND r.date_end <= ${report.date_end}`
    const volume = totals!.volume
    const failRate = volume === 0 ? 0 : totals!.failing / volume
    if (volume < ctx.settings.dmarcMinVolume || failRate <= ctx.settings.dmarcFailThreshold) return
    const windowStart = new Date(Math.floor(report.date_end / windowSeconds) * windowSeconds * 1000)
    const claimed = yield* sql`
      INSERT INTO dmarc_alerts (account_id, domain, window_start, created_at)
      VALUES (${accountId}, ${domain}, ${windowStart}, ${ctx.now})
      ON CONFLICT DO NOTHING RETURNING domain`
    if (claimed.length === 0) return
    const sources = yield* sql<{ source_ip: string; count: number }>`
      SELECT c.source_ip, sum(c.count)::int AS count
      FROM dmarc_reports r JOIN dmarc_records c ON c.report_id = r.id
      WHERE r.account_id = ${accountId} AND r.domain = ${domain} AND r.date_end > ${from} AND r.date_end <= ${report.date_end}
        AND coalesce(c.dkim, '') <> 'pass' AND coalesce(c.spf, '') <> 'pass'
      GROUP BY c.source_ip ORDER BY count DESC, c.source_ip LIMIT 5`
    const event = DmarcAlignmentFailure.make({
      domain,
      fail_rate: Math.round(failRate * 10_000) / 10_000,
      volume,
      policy_p: report.policy_p,
      window_days: ctx.settings.dmarcWindowDays,
      top_failing_sources: sources.map((s) => ({ source_ip: s.source_ip, count: s.count }))
    })
    const keys = yield* sql<{ id: string }>`
      SELECT id FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL AND webhook_url IS NOT NULL`
    for (const key of keys) {
      yield* emitEvent({ accountId, keyId: key.id, event, at: ctx.now })
    }
  })
