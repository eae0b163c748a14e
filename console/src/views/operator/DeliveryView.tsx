/**
 * One webhook delivery: what was sent (the payload) and what the receiver answered, every attempt
 * of it, and a retry. The receiver's answers are the tenant's (or a stranger's) text: shown as
 * text in <pre>, never as markup.
 */
import { useState } from "preact/hooks"
import { type FireResult, keysApi } from "../../api/operator.ts"
import { hrefOf, onLinkClick } from "../../router.ts"
import { ActionButton } from "../../components/ActionButton.tsx"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { When } from "../../components/When.tsx"
import { useLoad } from "../../components/use-load.ts"

const describeFire = (fired: FireResult): string =>
  `Retried: ${fired.status}` + (fired.http_code === null ? "" : `, HTTP ${fired.http_code}`) +
  (fired.error === null ? "" : ` (${fired.error})`) + ` in ${fired.duration_ms} ms.`

export const DeliveryView = ({ keyId, deliveryId }: { keyId: string; deliveryId: string }) => {
  const detail = useLoad(() => keysApi.delivery(keyId, deliveryId), [keyId, deliveryId])
  const [fired, setFired] = useState<FireResult | undefined>(undefined)
  const back = `keys/${keyId}`
  const d = detail.data
  return (
    <div>
      <p><a href={hrefOf(back)} onClick={onLinkClick(back)}>Back to the key</a></p>
      <LoadStatus loaded={detail} what="the delivery" />
      {d === undefined ? null : (
        <div>
          <h2>Delivery of {d.event}</h2>
          <dl class="op-facts">
            <dt>Status</dt><dd class={`op-status op-${d.status}`} id="delivery-status-value">{d.status}</dd>
            <dt>HTTP code</dt><dd id="delivery-code">{d.http_code ?? "—"}</dd>
            <dt>Attempts</dt><dd>{d.attempts}</dd>
            <dt>Last error</dt><dd class="op-wrap">{d.error ?? "none"}</dd>
            <dt>Next attempt</dt><dd><When iso={d.next_attempt_at} /></dd>
            <dt>Event id</dt><dd><code class="op-wrap">{d.event_id}</code></dd>
          </dl>
          <ActionButton run={() => keysApi.retry(keyId, deliveryId)} onDone={(answer) => {
            setFired(answer)
            detail.reload()
          }}>Retry now</ActionButton>
          {fired === undefined ? null : <p role="status" id="retry-result">{describeFire(fired)}</p>}
          <h3>Payload</h3>
          <pre class="op-pre" tabIndex={0} aria-label="Payload">{JSON.stringify(d.payload, null, 2)}</pre>
          <h3>Last response body</h3>
          <pre class="op-pre" tabIndex={0} aria-label="Last response body" id="response-body">{d.response_body ?? "(none)"}</pre>
          <h3>Attempts</h3>
          <ScrollTable label="Attempts"><table>
            <thead><tr><th scope="col">At</th><th scope="col">HTTP code</th><th scope="col">Took</th><th scope="col">Error</th><th scope="col">Response body</th></tr></thead>
            <tbody>
              {d.attempt_history.map((attempt, index) => (
                <tr key={index}>
                  <td><When iso={attempt.attempted_at} /></td>
                  <td>{attempt.http_code ?? "—"}</td>
                  <td>{attempt.duration_ms} ms</td>
                  <td class="op-wrap">{attempt.error ?? ""}</td>
                  <td class="op-wrap"><code>{attempt.response_body ?? ""}</code></td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
        </div>
      )}
    </div>
  )
}
