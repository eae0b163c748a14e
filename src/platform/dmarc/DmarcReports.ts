/** Reading the DMARC aggregate reports the inbound processor stored, for their account only. */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"

export class DmarcReportNotFound extends Data.TaggedError("DmarcReportNotFound")<{ readonly id: number }> {}

export interface ListFilter {
  readonly page: number
  readonly per_page: number
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly domain?: string | undefined
}

interface ReportRow {
  readonly id: string
  readonly domain: string
  readonly org_name: string
  readonly report_id: string
  readonly date_begin: string
  readonly date_end: string
  readonly policy_p: string
  readonly messages: number
  readonly created_at: Date
}

/** bigint columns arrive as strings; ids and epochs fit a JS number exactly. */
const item = (row: ReportRow) => ({
  id: Number(row.id),
  domain: row.domain,
  org_name: row.org_name,
  report_id: row.report_id,
  date_begin: Number(row.date_begin),
  date_end: Number(row.date_end),
  policy_p: row.policy_p
})

export class DmarcReports extends Effect.Service<DmarcReports>()("herald/DmarcReports", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const list = (accountId: string, filter: ListFilter) =>
      Effect.gen(function*() {
        const where = sql.and([
          sql`account_id = ${accountId}`,
          ...(filter.domain === undefined ? [] : [sql`domain = ${filter.domain.toLowerCase()}`]),
          ...(filter.from === undefined ? [] : [sql`date_end >= ${filter.from}`]),
          ...(filter.to === undefined ? [] : [sql`date_begin <= ${filter.to}`])
        ])
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM dmarc_reports WHERE ${where}`
        const rows = yield* sql<ReportRow>`
          SELECT id, domain, org_name, report_id, date_begin, date_end, policy_p, messages, created_at
          FROM dmarc_reports WHERE ${where}
          ORDER BY date_begin DESC, id DESC
          LIMIT ${filter.per_page} OFFSET ${(filter.page - 1) * filter.per_page}`
        return { page: filter.page, per_page: filter.per_page, total: count!.total, items: rows.map(item) }
      })

    const get = (accountId: string, id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<ReportRow>`
          SELECT id, domain, org_name, report_id, date_begin, date_end, policy_p, messages, created_at
          FROM dmarc_reports WHERE id = ${id} AND account_id = ${accountId}`
        if (row === undefined) return yield* new DmarcReportNotFound({ id })
        const records = yield* sql<{
          source_ip: string
          count: number
          disposition: string | null
          dkim: string | null
          spf: string | null
          header_from: string | null
        }>`SELECT source_ip, count, disposition, dkim, spf, header_from FROM dmarc_records
          WHERE report_id = ${id} ORDER BY count DESC, source_ip`
        return { ...item(row), messages: row.messages, received_at: row.created_at.toISOString(), records }
      })

    return { list, get } as const
  })
}) {}
