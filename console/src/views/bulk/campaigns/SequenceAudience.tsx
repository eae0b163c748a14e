/**
 * Enrolling a list or a segment in a sequence, with the counts the API answers; and the
 * subscriptions by state, paged, each with the pause, resume or cancel its state allows.
 */
import { useState } from "preact/hooks"
import { audienceApi, type EnrollResult, sequencesApi, type Subscription, SUBSCRIPTION_STATES, type SubscriptionState } from "../../../api/bulk-campaigns.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { When } from "../../../components/When.tsx"
import { PagedPicker } from "./PagedPicker.tsx"
import { StatusBadge } from "./StatusBadge.tsx"

const EnrollCounts = ({ result }: { result: EnrollResult }) => (
  <div role="status">
    <ul class="sq-counts" aria-label="Enrolment">
      <li><strong data-count="enrolled">{count(result.enrolled)}</strong> enrolled</li>
      <li><strong data-count="already_in">{count(result.already_in)}</strong> already in</li>
      <li><strong data-count="skipped_terminal">{count(result.skipped_terminal)}</strong> finished earlier (not enrolled again)</li>
      <li><strong data-count="suppressed">{count(result.suppressed)}</strong> suppressed</li>
      <li><strong data-count="total">{count(result.total)}</strong> active contacts in all</li>
    </ul>
    {result.truncated ? <p class="notice">More contacts remain: enrol again to continue.</p> : null}
  </div>
)

export const Enroll = ({ onEnrolled, sequenceId }: { sequenceId: string; onEnrolled: () => void }) => {
  const [kind, setKind] = useState<"list" | "segment">("list")
  const [chosen, setChosen] = useState<string | null>(null)
  const [result, setResult] = useState<EnrollResult | undefined>(undefined)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setResult(undefined)
    if (chosen === null) throw new Error(`Choose the ${kind} to enrol.`)
    setResult(await sequencesApi.enroll(sequenceId, kind === "list" ? { list_id: chosen } : { segment_id: chosen }))
    onEnrolled()
  })
  const choose = (next: "list" | "segment") => {
    setKind(next)
    setChosen(null)
  }
  return (
    <form onSubmit={onSubmit} aria-labelledby="enroll-heading">
      <h2 id="enroll-heading">Enrol contacts</h2>
      <fieldset class="cp-choice">
        <legend>Enrol</legend>
        <label><input type="radio" name="enroll-kind" checked={kind === "list"} onChange={() => choose("list")} />A list</label>
        <label><input type="radio" name="enroll-kind" checked={kind === "segment"} onChange={() => choose("segment")} />A segment</label>
      </fieldset>
      {kind === "list"
        // Keyed: one picker instance per kind, so switching kind loads the other list.
        ? <PagedPicker key="list" legend="Lists to enrol" name="enroll-list" load={audienceApi.lists} selected={chosen} onSelect={(item) => setChosen(item.id)}
          detail={(list) => `${count(list.sendable_count)} sendable`} empty="This key has no list yet." />
        : <PagedPicker key="segment" legend="Segments to enrol" name="enroll-segment" load={audienceApi.segments} selected={chosen} onSelect={(item) => setChosen(item.id)}
          empty="This key has no segment yet." />}
      <button type="submit" disabled={busy}>Enrol</button>
      <ErrorMessage error={error} id="enroll-error" />
      {result === undefined ? null : <EnrollCounts result={result} />}
    </form>
  )
}

const SubscriptionActions = ({ sequenceId, subscription, onDone }: { sequenceId: string; subscription: Subscription; onDone: () => void }) => {
  const act = (action: "pause" | "resume" | "cancel") => () => sequencesApi.actOn(sequenceId, subscription.id, action)
  const running = subscription.state === "active" || subscription.state === "paused"
  return (
    <span class="op-actions" role="group" aria-label={`Actions for ${subscription.email}`}>
      {subscription.state === "active" ? <ActionButton run={act("pause")} onDone={onDone}>Pause</ActionButton> : null}
      {subscription.state === "paused" ? <ActionButton run={act("resume")} onDone={onDone}>Resume</ActionButton> : null}
      {running ? <ActionButton danger confirm={`Cancel ${subscription.email}'s subscription?`} run={act("cancel")} onDone={onDone}>Cancel</ActionButton> : null}
    </span>
  )
}

export const Subscriptions = ({ onChanged, refresh, sequenceId }: { sequenceId: string; refresh: number; onChanged: () => void }) => {
  const [state, setState] = useState<SubscriptionState | "">("")
  const [offset, setOffset] = useState(0)
  const page = useLoad(() => sequencesApi.subscriptions(sequenceId, state === "" ? undefined : state, PAGE_SIZE, offset), [sequenceId, state, offset, refresh])
  const done = () => {
    page.reload()
    onChanged()
  }
  return (
    <section aria-labelledby="subscriptions-heading">
      <h2 id="subscriptions-heading">Subscriptions</h2>
      <div class="op-toolbar">
        <label for="subscription-state">State</label>
        <select id="subscription-state" value={state} onChange={(e) => {
          setState(e.currentTarget.value as SubscriptionState | "")
          setOffset(0)
        }}>
          <option value="">Any</option>
          {SUBSCRIPTION_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
        <button type="button" class="secondary" onClick={done}>Refresh</button>
      </div>
      <LoadStatus loaded={page} what="the subscriptions" />
      {page.data === undefined ? null : (
        <>
          <ScrollTable label="Subscriptions">
            <table aria-busy={page.loading}>
              <thead><tr><th scope="col">Contact</th><th scope="col">State</th><th scope="col">Next step due</th><th scope="col">Enrolled</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {page.data.items.map((s) => (
                  <tr key={s.id}>
                    <td class="wrap">{s.email}</td>
                    <td><StatusBadge status={s.state} />{s.hold_reason === null && s.reason === null ? null : ` (${s.hold_reason ?? s.reason})`}</td>
                    <td><When iso={s.next_due_at} /></td>
                    <td><When iso={s.enrolled_at} /></td>
                    <td><SubscriptionActions sequenceId={sequenceId} subscription={s} onDone={done} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
          <Pager label="Subscriptions pages" total={page.data.total} offset={offset} limit={PAGE_SIZE} onOffset={setOffset} busy={page.loading} />
        </>
      )}
    </section>
  )
}
