/**
 * The import preview as tables (#29 view 1): what the file holds (valid, invalid, duplicates,
 * existing contacts), the rows refused with the API's reason, the rows folded into an earlier one,
 * the addresses already contacts; and the 422 gate explained when it would trip.
 */
import { count } from "../../../components/format.ts"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import type { PreviewSummary } from "./preview-worker.ts"

/** The import would answer 422 too_many_invalid_recipients (src/bulk/contacts/import.ts, the same rule). */
export const gateTrips = (s: PreviewSummary): boolean =>
  s.uniqueAddresses >= s.validationMin && s.invalidCount * 100 > s.maxInvalidPct * s.uniqueAddresses

export const GateExplained = ({ summary }: { summary: PreviewSummary }) => (
  <div class="notice" role="alert" id="import-gate">
    <p>
      <strong>This import would be refused.</strong> {count(summary.invalidCount)} of {count(summary.uniqueAddresses)} unique
      addresses are invalid, more than the {summary.maxInvalidPct} % the appliance accepts in an import of{" "}
      {count(summary.validationMin)} addresses or more (422 too_many_invalid_recipients: nothing would be imported).
    </p>
    <p>Correct or remove the invalid rows listed below, then choose the file again.</p>
  </div>
)

const Counts = ({ summary }: { summary: PreviewSummary }) => {
  const valid = summary.uniqueAddresses - summary.invalidCount
  return (
    <ScrollTable label="Import preview counts">
      <table class="import-counts">
        <caption class="sr-only">What the file holds</caption>
        <tbody>
          <tr><th scope="row">Rows read</th><td class="num">{count(summary.rows)}</td></tr>
          <tr><th scope="row">Valid addresses</th><td class="num">{count(valid)}</td></tr>
          <tr><th scope="row">of which already contacts</th><td class="num">{count(summary.existingCount)}</td></tr>
          <tr><th scope="row">Invalid (left out)</th><td class="num">{count(summary.invalidCount)}</td></tr>
          <tr><th scope="row">Duplicates (folded into their first row)</th><td class="num">{count(summary.duplicateCount)}</td></tr>
        </tbody>
      </table>
    </ScrollTable>
  )
}

const More = ({ shown, total }: { shown: number; total: number }) =>
  total > shown && shown > 0 ? <p>The first {count(shown)} of {count(total)} are listed.</p> : null

export const ImportPreviewTable = ({ summary }: { summary: PreviewSummary }) => (
  <>
    <Counts summary={summary} />
    {summary.sample.length === 0 ? null : (
      <>
        <h3>First rows as read</h3>
        <ScrollTable label="First rows as read">
          <table>
            <thead><tr><th scope="col" class="num">Row</th><th scope="col">Email</th><th scope="col">Name</th></tr></thead>
            <tbody>
              {summary.sample.map((row) => (
                <tr key={row.row}><td class="num">{row.row}</td><td class="wrap">{row.email}</td><td class="wrap">{row.name}</td></tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      </>
    )}
    {summary.invalidCount === 0 ? null : (
      <>
        <h3 id="import-invalid">Invalid rows</h3>
        {summary.invalid.length === 0 ? <p>{summary.invalidCount === 1 ? "1 address is invalid." : `${count(summary.invalidCount)} addresses are invalid.`}</p> : (
          <ScrollTable label="Invalid rows">
            <table>
              <thead><tr><th scope="col" class="num">Row</th><th scope="col">Email</th><th scope="col">Reason</th></tr></thead>
              <tbody>
                {summary.invalid.map((row) => (
                  <tr key={row.row}><td class="num">{row.row}</td><td class="wrap">{row.email}</td><td class="wrap">{row.reason}</td></tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
        )}
        <More shown={summary.invalid.length} total={summary.invalidCount} />
      </>
    )}
    {summary.duplicateCount === 0 ? null : (
      <>
        <h3>Duplicate rows</h3>
        <ScrollTable label="Duplicate rows">
          <table>
            <thead><tr><th scope="col" class="num">Row</th><th scope="col">Email</th><th scope="col" class="num">Same address as row</th></tr></thead>
            <tbody>
              {summary.duplicates.map((row) => (
                <tr key={row.row}><td class="num">{row.row}</td><td class="wrap">{row.email}</td><td class="num">{row.firstRow}</td></tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
        <More shown={summary.duplicates.length} total={summary.duplicateCount} />
      </>
    )}
    {summary.existingCount === 0 ? null : (
      <>
        <h3>Already contacts</h3>
        <ul class="existing">{summary.existing.map((email) => <li key={email}>{email}</li>)}</ul>
        <More shown={summary.existing.length} total={summary.existingCount} />
      </>
    )}
  </>
)
