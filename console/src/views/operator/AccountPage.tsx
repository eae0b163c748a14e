/** One account, for the admin: its plan, its limit overrides, suspension and a reputation pause. */
import { useState } from "preact/hooks"
import { type Account, adminApi, usageApi } from "../../api/operator.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { hrefOf, onLinkClick } from "../../router.ts"
import { ActionButton } from "../../components/ActionButton.tsx"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { When } from "../../components/When.tsx"
import { useLoad } from "../../components/use-load.ts"

/** "" → null (the override cleared); anything else must be a whole number. */
const limitOf = (text: string): number | null => (text.trim() === "" ? null : Number(text.trim()))

const PlanForm = ({ account, onSaved }: { account: Account; onSaved: (account: Account) => void }) => {
  const plans = useLoad(() => usageApi.plans(), [])
  const [plan, setPlan] = useState(account.package_id ?? "")
  return (
    <div class="op-toolbar">
      <label for="admin-plan">Plan</label>
      <select id="admin-plan" value={plan} onChange={(event) => setPlan(event.currentTarget.value)}>
        <option value="">Choose a plan</option>
        {(plans.data?.items ?? []).map((item) => <option key={item.id} value={item.id}>{item.name}</option>)}
      </select>
      <ActionButton run={() => adminApi.assignPlan(account.id, plan)} onDone={onSaved}>Put on this plan</ActionButton>
    </div>
  )
}

const LimitsForm = ({ account, onSaved }: { account: Account; onSaved: (account: Account) => void }) => {
  const [rate, setRate] = useState(account.rate_per_min_override?.toString() ?? "")
  const [quota, setQuota] = useState(account.monthly_quota_override?.toString() ?? "")
  const [error, setError] = useState<unknown>(undefined)
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      onSaved(await adminApi.setLimits(account.id, { rate_per_min: limitOf(rate), monthly_quota: limitOf(quota) }))
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <form class="op-inline-form" onSubmit={(event) => void submit(event)} aria-labelledby="limits-heading">
      <h3 id="limits-heading">Limits (empty: the plan's)</h3>
      <Field id="limit-rate" label="Sends per minute" type="number" value={rate} onValue={setRate} />
      <Field id="limit-quota" label="Sends per month" type="number" value={quota} onValue={setQuota} />
      <button type="submit">Save limits</button>
      <ErrorMessage error={error} id="limits-error" />
    </form>
  )
}

export const AccountPage = ({ id }: { id: string }) => {
  const loaded = useLoad(() => adminApi.account(id), [id])
  const [current, setCurrent] = useState<Account | undefined>(undefined)
  const account = current ?? loaded.data
  return (
    <div>
      <p><a href={hrefOf("admin")} onClick={onLinkClick("admin")}>All accounts</a></p>
      <LoadStatus loaded={loaded} what="the account" />
      {account === undefined ? null : (
        <div>
          <h2 class="op-wrap">{account.name}</h2>
          <dl class="op-facts">
            <dt>Email</dt><dd class="op-wrap">{account.email}</dd>
            <dt>Status</dt><dd id="account-status">{account.status}</dd>
            <dt>Plan</dt><dd>{account.package_id ?? "none"}</dd>
            <dt>Sending</dt><dd class="op-wrap">{account.sending_paused_reason === null ? "not paused" : `paused: ${account.sending_paused_reason}`}</dd>
            <dt>Created</dt><dd><When iso={account.created_at} /></dd>
          </dl>
          <div class="op-actions">
            {account.status === "suspended"
              ? <ActionButton run={() => adminApi.action(account.id, "unsuspend")} onDone={setCurrent}>Lift suspension</ActionButton>
              : <ActionButton danger confirm="Suspend? Its sends are refused and scheduled sends discarded." run={() => adminApi.action(account.id, "suspend")} onDone={setCurrent}>Suspend</ActionButton>}
            {account.sending_paused_reason === null ? null : <ActionButton run={() => adminApi.action(account.id, "unpause")} onDone={setCurrent}>Unpause sending</ActionButton>}
          </div>
          <PlanForm account={account} onSaved={setCurrent} />
          <LimitsForm key={account.id} account={account} onSaved={setCurrent} />
        </div>
      )}
    </div>
  )
}
