/**
 * Sequences (#29 "Views" 6), as the active key.
 *
 *   /console/sequences        the key's sequences, paged, and a form for a new one
 *   /console/sequences/{id}   its steps on a timeline, enrolment, and its subscriptions by state
 */
import { useState } from "preact/hooks"
import { type Sequence, sequencesApi } from "../../../api/bulk-campaigns.ts"
import { domainsApi } from "../../../api/sender.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { hrefOf, navigate, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import type { ViewProps } from "../../index.ts"
import { Enroll, Subscriptions } from "./SequenceAudience.tsx"
import { SequenceSteps } from "./SequenceSteps.tsx"
import { StatusBadge } from "./StatusBadge.tsx"
import "../../sender/sender.css"
import "../../operator/operator.css"
import "./campaigns.css"

/** A new sequence: its name and its default sender, on one of the account's verified domains. */
const NewSequence = () => {
  const domains = useLoad(() => domainsApi.list(), [])
  const verified = (domains.data?.items ?? []).filter((d) => d.verified).map((d) => d.domain)
  const [name, setName] = useState("")
  const [local, setLocal] = useState("hello")
  const [domain, setDomain] = useState("")
  const { busy, error, onSubmit } = useSubmit(async () => {
    const created = await sequencesApi.create({ name, from_email: domain === "" ? null : `${local.trim()}@${domain}`, from_name: null })
    navigate(`sequences/${created.id}`)
  })
  return (
    <form onSubmit={onSubmit} class="cp-box" aria-labelledby="new-sequence-heading">
      <h2 id="new-sequence-heading">New sequence</h2>
      <Field id="sequence-name" label="Name" value={name} onValue={setName} required maxLength={200} />
      <Field id="sequence-from-local" label="Sender address, before the @" value={local} onValue={setLocal} maxLength={64} />
      <div class="field">
        <label for="sequence-from-domain">Verified domain</label>
        <select id="sequence-from-domain" value={domain} onChange={(e) => setDomain(e.currentTarget.value)}>
          <option value="">{verified.length === 0 ? "No verified domain yet" : "Choose a domain"}</option>
          {verified.map((d) => <option key={d} value={d}>{d}</option>)}
        </select>
      </div>
      <button type="submit" disabled={busy}>Create sequence</button>
      <ErrorMessage error={error} id="new-sequence-error" />
    </form>
  )
}

const SequenceList = () => {
  const session = useSignedIn()
  const [offset, setOffset] = useState(0)
  const page = useLoad(() => sequencesApi.list(PAGE_SIZE, offset), [offset, session.active_key_id])
  return (
    <div>
      <LoadStatus loaded={page} what="the sequences" />
      {page.data === undefined ? null : page.data.total === 0 && offset === 0 ? <p>No sequence yet for this key.</p> : (
        <>
          <ScrollTable label="Sequences">
            <table aria-busy={page.loading}>
              <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col" class="num">Steps</th><th scope="col" class="num">Active</th><th scope="col" class="num">Completed</th></tr></thead>
              <tbody>
                {page.data.items.map((s) => (
                  <tr key={s.id}>
                    <td class="wrap"><a href={hrefOf(`sequences/${s.id}`)} onClick={onLinkClick(`sequences/${s.id}`)}>{s.name}</a></td>
                    <td><StatusBadge status={s.status} /></td>
                    <td class="num">{count(s.step_count)}</td>
                    <td class="num">{count(s.subscriptions.active)}</td>
                    <td class="num">{count(s.subscriptions.completed)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
          <Pager label="Sequences pages" total={page.data.total} offset={offset} limit={PAGE_SIZE} onOffset={setOffset} busy={page.loading} />
        </>
      )}
      <NewSequence />
    </div>
  )
}

const SequenceHeader = ({ sequence, onChanged }: { sequence: Sequence; onChanged: () => void }) => (
  <div>
    <h2 class="cp-title op-wrap">{sequence.name}</h2>
    <dl class="op-facts">
      <dt>Status</dt><dd><StatusBadge status={sequence.status} /></dd>
      <dt>From</dt><dd class="op-wrap">{sequence.from_email ?? "—"}</dd>
      <dt>Subscriptions</dt>
      <dd data-testid="subscription-counts">
        {count(sequence.subscriptions.active)} active, {count(sequence.subscriptions.paused)} paused, {count(sequence.subscriptions.completed)} completed, {count(sequence.subscriptions.cancelled)} cancelled
      </dd>
    </dl>
    <div class="op-actions">
      {sequence.status === "active"
        ? <ActionButton run={() => sequencesApi.update(sequence.id, { status: "inactive" })} onDone={onChanged}>Make inactive (hold due steps)</ActionButton>
        : <ActionButton run={() => sequencesApi.update(sequence.id, { status: "active" })} onDone={onChanged}>Make active</ActionButton>}
    </div>
  </div>
)

const SequencePage = ({ id }: { id: string }) => {
  const session = useSignedIn()
  const sequence = useLoad(() => sequencesApi.get(id), [id, session.active_key_id])
  const [refresh, setRefresh] = useState(0)
  const shown = sequence.data?.id === id ? sequence.data : undefined
  return (
    <div>
      <p><a href={hrefOf("sequences")} onClick={onLinkClick("sequences")}>All sequences</a></p>
      <LoadStatus loaded={sequence} what="the sequence" />
      {shown === undefined ? null : (
        <>
          <SequenceHeader sequence={shown} onChanged={sequence.reload} />
          <SequenceSteps sequence={shown} onChanged={sequence.reload} />
          <Enroll sequenceId={shown.id} onEnrolled={() => {
            sequence.reload()
            setRefresh((n) => n + 1)
          }} />
          <Subscriptions sequenceId={shown.id} refresh={refresh} onChanged={sequence.reload} />
        </>
      )}
    </div>
  )
}

export const SequencesView = ({ rest }: ViewProps) => {
  const [id] = rest
  return id === undefined ? <SequenceList /> : <SequencePage id={decodeURIComponent(id)} />
}
