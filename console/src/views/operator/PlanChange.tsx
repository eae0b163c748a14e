/**
 * A plan change (POST /v1/client/subscriptions/change-plan), confirmed with the account's
 * password: upgrades apply at once with a prorated charge, downgrades at the next reset. A pending
 * downgrade is shown, and the same password withdraws it (cancel-pending-change).
 */
import { useState } from "preact/hooks"
import { type PlanChange as Change, type UsageRecord, usageApi } from "../../api/operator.ts"
import { ApiError } from "../../api/client.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { cents, count } from "../../components/format.ts"
import { type Loaded, useLoad } from "../../components/use-load.ts"

const describe = (change: Change): string =>
  change.type === "upgrade"
    ? `Upgraded now${change.proration === undefined ? "" : `: ${cents(change.proration.amount_usd_cents)} for the ${change.proration.days_charged} days left of the cycle`}.`
    : `Downgrade scheduled for ${change.effective_at === undefined ? "the next reset" : new Date(change.effective_at).toLocaleString()}.`

/** `usage` is the view's usage record: a change asks it again, so the record above shows it too. */
export const PlanChange = ({ usage }: { usage: Loaded<UsageRecord> }) => {
  const plans = useLoad(() => usageApi.plans(), [])
  const pending = usage.data?.pending_change ?? null
  const [plan, setPlan] = useState("")
  const [password, setPassword] = useState("")
  const [error, setError] = useState<unknown>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const run = async (call: () => Promise<string>) => {
    setBusy(true)
    setError(undefined)
    setDone(undefined)
    try {
      setDone(await call())
      setPassword("")
      usage.reload()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => describe(await usageApi.changePlan(plan, password)))
  }
  const cancelPending = () =>
    void run(async () => (await usageApi.cancelPendingChange(password), "The pending change is cancelled: the plan stays as it is."))
  // The API names the field it refuses (param): show the message under that field.
  const about = (param: string) => (error instanceof ApiError && error.param === param ? error.message : undefined)
  const general = error !== undefined && about("package_id") === undefined ? error : undefined
  const selectable = plans.data?.items.filter((item) => item.selectable) ?? []
  return (
    <section class="op-section" aria-labelledby="plan-heading">
      <h2 id="plan-heading">Change plan</h2>
      <LoadStatus loaded={plans} what="the plans" />
      {pending === null ? null : (
        <p class="notice" id="pending-change">
          Pending: a change to {pending.package_id} on {new Date(pending.effective_at).toLocaleString()} (the next reset).
          To keep the current plan, enter your password below and cancel the pending change.
        </p>
      )}
      <form class="op-inline-form" onSubmit={(event) => void submit(event)}>
        <div class="op-field">
          <label for="plan-choice">Plan</label>
          <select id="plan-choice" value={plan} required onChange={(event) => setPlan(event.currentTarget.value)}
            aria-describedby={about("package_id") === undefined ? undefined : "plan-choice-error"}>
            <option value="">Choose a plan</option>
            {selectable.map((item) => (
              <option key={item.id} value={item.id}>
                {item.name}: {cents(item.price_usd_cents)}/month, {count(item.monthly_quota)} emails{item.features.includes("dmarc") ? ", DMARC reports" : ""}
              </option>
            ))}
          </select>
          {about("package_id") === undefined ? null : <p class="error" id="plan-choice-error">{about("package_id")}</p>}
        </div>
        <Field id="plan-password" label="Your password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
        <button type="submit" disabled={busy}>Change plan</button>
        {pending === null ? null : (
          <button type="button" class="secondary" disabled={busy || password === ""} aria-describedby="pending-change"
            onClick={cancelPending}>Cancel the pending change</button>
        )}
        <ErrorMessage error={general} id="plan-error" />
        {done === undefined ? null : <p role="status">{done}</p>}
      </form>
    </section>
  )
}
