/** The usage record of the spec (GET /v1/client/usage): the plan, each key's sends, the reset. */
import type { UsageRecord as Usage } from "../../api/operator.ts"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { When } from "../../components/When.tsx"
import { cents, count } from "../../components/format.ts"
import type { Loaded } from "../../components/use-load.ts"

/** `usage` is loaded once by the view, which the plan form shares (a plan change asks it again). */
export const UsageRecord = ({ usage }: { usage: Loaded<Usage> }) => {
  const u = usage.data
  return (
    <section class="op-section" aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage this period</h2>
      <LoadStatus loaded={usage} what="the usage" />
      {u === undefined ? null : (
        <div>
          {u.subscriptions.length === 0
            ? <p>No plan: the account has the appliance's default limits.</p>
            : u.subscriptions.map((sub) => (
              <p key={sub.package_id}>
                Plan <strong id="current-plan">{sub.package_name}</strong>: {count(sub.monthly_quota)} emails a month,
                {" "}{count(sub.rate_per_min)} a minute (since <When iso={sub.started_at} />).
              </p>
            ))}
          <p>The monthly counters reset <When iso={u.next_reset} />.</p>
          {u.overage.emails === 0 ? null : (
            <p>Past the quota: {count(u.overage.emails)} emails, {cents(u.overage.amount_usd_cents)}.</p>
          )}
          <ScrollTable label="Sends by key"><table>
            <thead><tr><th scope="col">Key</th><th scope="col">Sent this period</th><th scope="col">Account quota left</th><th scope="col">Of</th></tr></thead>
            <tbody>
              {u.keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.label}</td>
                  <td>{count(key.sent_this_period)}</td>
                  <td>{count(key.quota_remaining)}</td>
                  <td>{count(key.monthly_quota)}</td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
        </div>
      )}
    </section>
  )
}
