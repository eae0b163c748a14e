/**
 * DMARC aggregate reports of the account's domains (plans with the `dmarc` feature; without it the
 * API's 403 message says so). A report's records are also drawn as one bar per sending source:
 * messages that passed DMARC (DKIM or SPF aligned and passing) and those that failed.
 * Org names and every field of a report are a stranger's text: rendered as text.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../api/client.ts"
import { type DmarcRecord, usageApi } from "../../api/operator.ts"
import { hrefOf, onLinkClick } from "../../router.ts"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { Pager } from "../../components/Pager.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { count } from "../../components/format.ts"
import { useLoad } from "../../components/use-load.ts"

const PER_PAGE = 20
/** Bars drawn: the sources with the most messages (the table below lists every record). */
const CHART_SOURCES = 20

const day = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, 10)

export const DmarcReports = () => {
  const [page, setPage] = useState(1)
  const reports = useLoad(() => usageApi.dmarcReports(page, PER_PAGE), [page])
  const notInPlan = reports.error instanceof ApiError && reports.error.code === "feature_not_enabled"
  return (
    <section class="op-section" aria-labelledby="dmarc-heading">
      <h2 id="dmarc-heading">DMARC reports</h2>
      {notInPlan
        ? <p class="notice" id="dmarc-not-in-plan">{(reports.error as ApiError).message}. Plans with DMARC reports say so in the list above.</p>
        : <LoadStatus loaded={reports} what="the DMARC reports" />}
      {reports.data?.total === 0 && !notInPlan ? <p>No DMARC report has arrived for the account's domains yet.</p> : null}
      {reports.data === undefined || reports.data.total === 0 || notInPlan ? null : (
        <div>
          <ScrollTable label="DMARC reports"><table>
            <thead><tr><th scope="col">Domain</th><th scope="col">From</th><th scope="col">Period</th><th scope="col">Policy</th><th scope="col">Report</th></tr></thead>
            <tbody>
              {reports.data.items.map((report) => (
                <tr key={report.id}>
                  <td>{report.domain}</td>
                  <td class="op-wrap">{report.org_name}</td>
                  <td>{day(report.date_begin)} – {day(report.date_end)}</td>
                  <td>{report.policy_p}</td>
                  <td><a href={hrefOf(`usage/dmarc/${report.id}`)} onClick={onLinkClick(`usage/dmarc/${report.id}`)}>Open {report.report_id}</a></td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
          <Pager label="DMARC reports pages" total={reports.data.total} limit={PER_PAGE} offset={(page - 1) * PER_PAGE}
            onOffset={(offset) => setPage(Math.floor(offset / PER_PAGE) + 1)} />
        </div>
      )}
    </section>
  )
}

interface SourceTally {
  readonly source: string
  pass: number
  fail: number
}

const tally = (records: ReadonlyArray<DmarcRecord>): Array<SourceTally> => {
  const bySource = new Map<string, SourceTally>()
  for (const record of records) {
    const entry = bySource.get(record.source_ip) ?? { source: record.source_ip, pass: 0, fail: 0 }
    if (record.dkim === "pass" || record.spf === "pass") entry.pass += record.count
    else entry.fail += record.count
    bySource.set(record.source_ip, entry)
  }
  return [...bySource.values()].sort((a, b) => b.pass + b.fail - (a.pass + a.fail)).slice(0, CHART_SOURCES)
}

/** The same colours as .op-pass-bg and .op-fail-bg in operator.css (AA contrast on white). */
const PASS = "#137333"
const FAIL = "#a50e0e"

/** Inline SVG (no script, no library): one row per source, the pass part then the fail part. */
const SourceChart = ({ records }: { records: ReadonlyArray<DmarcRecord> }) => {
  const rows = tally(records)
  const most = Math.max(1, ...rows.map((row) => row.pass + row.fail))
  const labelWidth = 130
  const barWidth = 330
  const rowHeight = 24
  const height = rows.length * rowHeight + 4
  const summary = rows.map((row) => `${row.source}: ${row.pass} passed, ${row.fail} failed`).join("; ")
  return (
    <figure>
      <svg class="op-chart" viewBox={`0 0 ${labelWidth + barWidth + 70} ${height}`} width={labelWidth + barWidth + 70} height={height}
        role="img" aria-label={`DMARC pass and fail by source: ${summary}`}>
        {rows.map((row, index) => {
          const y = index * rowHeight + 2
          const passWidth = (row.pass / most) * barWidth
          const failWidth = (row.fail / most) * barWidth
          return (
            <g key={row.source}>
              <text x={0} y={y + 15} font-size="12" fill="#1a1a1a">{row.source}</text>
              <rect x={labelWidth} y={y} width={passWidth} height={18} fill={PASS} />
              <rect x={labelWidth + passWidth} y={y} width={failWidth} height={18} fill={FAIL} />
              <text x={labelWidth + passWidth + failWidth + 4} y={y + 15} font-size="12" fill="#1a1a1a">{row.pass}/{row.fail}</text>
            </g>
          )
        })}
      </svg>
      <figcaption class="op-legend">
        <span><span class="op-swatch op-pass-bg" />passed DMARC</span>
        <span><span class="op-swatch op-fail-bg" />failed</span>
      </figcaption>
    </figure>
  )
}

export const DmarcReportView = ({ id }: { id: string }) => {
  const report = useLoad(() => usageApi.dmarcReport(Number(id)), [id])
  const r = report.data
  return (
    <div>
      <p><a href={hrefOf("usage")} onClick={onLinkClick("usage")}>Back to usage and plan</a></p>
      <LoadStatus loaded={report} what="the report" />
      {r === undefined ? null : (
        <div>
          <h2 class="op-wrap">Report {r.report_id} from {r.org_name}</h2>
          <p>{r.domain}, {day(r.date_begin)} – {day(r.date_end)}, policy {r.policy_p}: {count(r.messages)} messages.</p>
          <SourceChart records={r.records} />
          <ScrollTable label="DMARC records"><table>
            <thead><tr><th scope="col">Source</th><th scope="col">Messages</th><th scope="col">DKIM</th><th scope="col">SPF</th><th scope="col">Disposition</th><th scope="col">Header from</th></tr></thead>
            <tbody>
              {r.records.map((record, index) => (
                <tr key={index}>
                  <td>{record.source_ip}</td>
                  <td>{count(record.count)}</td>
                  <td>{record.dkim ?? "—"}</td>
                  <td>{record.spf ?? "—"}</td>
                  <td>{record.disposition ?? "—"}</td>
                  <td class="op-wrap">{record.header_from ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
        </div>
      )}
    </div>
  )
}
