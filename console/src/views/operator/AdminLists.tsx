/**
 * The admin's server-paged lists: the outbound queue by destination site (a snapshot at most 15 s
 * old) and the inbound reports that changed nothing, with why. Both read a page at a time.
 */
import { useState } from "preact/hooks"
import { adminApi } from "../../api/operator.ts"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { Pager } from "../../components/Pager.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { When } from "../../components/When.tsx"
import { count } from "../../components/format.ts"
import { useLoad } from "../../components/use-load.ts"

const PAGE = 20

export const Queue = () => {
  const [offset, setOffset] = useState(0)
  const page = useLoad(() => adminApi.queue(PAGE, offset), [offset])
  return (
    <section class="op-section" aria-labelledby="queue-heading">
      <h2 id="queue-heading">Queue by destination</h2>
      <div class="op-toolbar">
        <button type="button" class="secondary" onClick={page.reload}>Refresh</button>
        {page.data?.generated_at === undefined ? null : <span>Snapshot of <When iso={page.data.generated_at} /></span>}
      </div>
      <LoadStatus loaded={page} what="the queue" />
      {page.data === undefined ? null : page.data.total === 0 ? <p id="queue-empty">Nothing is waiting.</p> : (
        <div>
          <ScrollTable label="Queue by destination site"><table>
            <thead>
              <tr><th scope="col">Site</th><th scope="col">Queued</th><th scope="col">Deferred</th><th scope="col">Oldest due</th><th scope="col">Deferrals (1 h)</th><th scope="col">Connections</th><th scope="col">Per minute</th></tr>
            </thead>
            <tbody>
              {page.data.items.map((site) => (
                <tr key={site.site}>
                  <td class="op-wrap">{site.site}</td>
                  <td>{count(site.queued)}</td>
                  <td>{count(site.deferred)}</td>
                  <td><When iso={site.oldest_due_at} /></td>
                  <td>{count(site.deferrals_last_hour)}</td>
                  <td>{site.connections} of {site.max_connections}</td>
                  <td>{site.max_per_minute === null ? "no cap" : count(site.max_per_minute)}</td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
          <Pager label="Queue pages" total={page.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
        </div>
      )}
    </section>
  )
}

export const RefusedInbound = () => {
  const [offset, setOffset] = useState(0)
  const page = useLoad(() => adminApi.refusedInbound(PAGE, offset), [offset])
  return (
    <section class="op-section" aria-labelledby="inbound-heading">
      <h2 id="inbound-heading">Refused inbound reports</h2>
      <LoadStatus loaded={page} what="the refused reports" />
      {page.data === undefined ? null : page.data.total === 0 ? <p>No report was refused.</p> : (
        <div>
          <ScrollTable label="Refused inbound reports"><table>
            <thead><tr><th scope="col">Received</th><th scope="col">From</th><th scope="col">Address</th><th scope="col">Kind</th><th scope="col">Why refused</th></tr></thead>
            <tbody>
              {page.data.items.map((report) => (
                <tr key={report.id}>
                  <td><When iso={report.received_at} /></td>
                  <td class="op-wrap">{report.mail_from === "" ? "(empty: a DSN)" : report.mail_from}</td>
                  <td>{report.remote_address}</td>
                  <td>{report.kind ?? report.state}</td>
                  <td class="op-wrap">{report.reason ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
          <Pager label="Refused inbound reports pages" total={page.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
        </div>
      )}
    </section>
  )
}
