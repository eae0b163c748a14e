/** A key's webhook deliveries, newest first, a page at a time from the API, filtered by status. */
import { useState } from "preact/hooks"
import { type DeliveryStatus, keysApi } from "../../api/operator.ts"
import { hrefOf, onLinkClick } from "../../router.ts"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { Pager } from "../../components/Pager.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { When } from "../../components/When.tsx"
import { useLoad } from "../../components/use-load.ts"

const PAGE = 20

export const DeliveryList = ({ keyId, refresh }: { keyId: string; refresh: number }) => {
  const [status, setStatus] = useState<DeliveryStatus | "">("")
  const [offset, setOffset] = useState(0)
  const page = useLoad(
    () => keysApi.deliveries(keyId, { status: status === "" ? undefined : status, limit: PAGE, offset }),
    [keyId, status, offset, refresh]
  )
  return (
    <section aria-labelledby="deliveries-heading">
      <h3 id="deliveries-heading">Deliveries</h3>
      <div class="op-toolbar">
        <label for="delivery-status">Status</label>
        <select id="delivery-status" value={status} onChange={(event) => {
          setStatus(event.currentTarget.value as DeliveryStatus | "")
          setOffset(0)
        }}>
          <option value="">all</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
        </select>
        <button type="button" class="secondary" onClick={page.reload}>Refresh</button>
      </div>
      <LoadStatus loaded={page} what="the deliveries" />
      {page.data === undefined ? null : (
        <div>
          <ScrollTable label="Webhook deliveries"><table>
            <thead>
              <tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">HTTP code</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Created</th></tr>
            </thead>
            <tbody>
              {page.data.items.map((delivery) => {
                const path = `keys/${keyId}/deliveries/${delivery.id}`
                return (
                  <tr key={delivery.id}>
                    <td><a href={hrefOf(path)} onClick={onLinkClick(path)}>{delivery.event}</a></td>
                    <td class={`op-status op-${delivery.status}`}>{delivery.status}</td>
                    <td>{delivery.http_code ?? "—"}</td>
                    <td>{delivery.attempts}</td>
                    <td class="op-wrap">{delivery.error ?? ""}</td>
                    <td><When iso={delivery.created_at} /></td>
                  </tr>
                )
              })}
            </tbody>
          </table></ScrollTable>
          <Pager label="Deliveries pages" total={page.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
        </div>
      )}
    </section>
  )
}
