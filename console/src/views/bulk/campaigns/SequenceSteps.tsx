/**
 * A sequence's steps on a timeline by their offsets (each from the previous step's due time), with
 * add, edit, delete and reorder. The API refuses a new order (and a delete) with 409 while
 * contacts are going through the sequence; that refusal is explained in plain words beside it.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../../api/client.ts"
import { type Sequence, sequencesApi, type Step } from "../../../api/bulk-campaigns.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { duration, StepForm } from "./StepForm.tsx"

/** Why a 409 on the order: the contacts in the sequence already have their next step set. */
const RunningExplained = ({ error, sequence }: { error: unknown; sequence: Sequence }) => {
  if (!(error instanceof ApiError && error.status === 409)) return <ErrorMessage error={error} id="reorder-error" />
  const { active, paused } = sequence.subscriptions
  return (
    <div class="error" role="alert" id="reorder-error">
      <p>
        The steps cannot be reordered while contacts are going through this sequence ({active} active, {paused} paused):
        each of them already waits for a particular next step. Wait until they complete, or cancel their subscriptions
        below, then reorder.
      </p>
      <p>The appliance said: {error.message}</p>
    </div>
  )
}

const StepCard = ({ sequenceId, step, onChanged }: { sequenceId: string; step: Step; onChanged: () => void }) => {
  const [editing, setEditing] = useState(false)
  if (editing) {
    return (
      <StepForm id={`step-${step.id}`} step={step} onCancel={() => setEditing(false)} onSave={async (write) => {
        await sequencesApi.updateStep(sequenceId, step.id, write)
        setEditing(false)
        onChanged()
      }} />
    )
  }
  return (
    <div class="sq-step">
      <p><strong>Step {step.position}</strong>: <span class="op-wrap">{step.subject ?? (step.template_id === null ? "(no subject)" : `template ${step.template_id}`)}</span></p>
      {step.body_text === null ? null : <p class="cp-hint">{step.body_text.slice(0, 140)}</p>}
      <div class="op-actions">
        <button type="button" class="secondary" onClick={() => setEditing(true)} aria-label={`Edit step ${step.position}`}>Edit</button>
        <ActionButton danger confirm={`Delete step ${step.position}?`} run={() => sequencesApi.removeStep(sequenceId, step.id)} onDone={onChanged}>
          Delete step {step.position}
        </ActionButton>
      </div>
    </div>
  )
}

export const SequenceSteps = ({ onChanged, sequence }: { sequence: Sequence; onChanged: () => void }) => {
  const steps = useLoad(() => sequencesApi.steps(sequence.id), [sequence.id])
  const [orderError, setOrderError] = useState<unknown>(undefined)
  const [adding, setAdding] = useState(0)
  const changed = () => {
    steps.reload()
    onChanged()
  }
  const move = async (from: number, to: number) => {
    const ids = (steps.data ?? []).map((s) => s.id)
    const [moved] = ids.splice(from, 1)
    ids.splice(to, 0, moved!)
    setOrderError(undefined)
    try {
      await sequencesApi.reorder(sequence.id, ids)
      changed()
    } catch (failure) {
      setOrderError(failure)
      onChanged()
    }
  }
  let elapsed = 0
  return (
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      <LoadStatus loaded={steps} what="the steps" />
      {steps.data === undefined ? null : steps.data.length === 0 ? <p>No step yet: add the first below.</p> : (
        <ol class="sq-timeline" aria-label="Steps by time">
          {steps.data.map((step, index) => {
            elapsed += step.offset_seconds
            const last = steps.data!.length - 1
            return (
              <li key={step.id}>
                <span class="sq-when">{index === 0 ? `${duration(step.offset_seconds)} after enrolment` : `${duration(step.offset_seconds)} after step ${index}`}</span>
                <span class="cp-hint"> · {duration(elapsed)} from enrolment</span>
                <StepCard sequenceId={sequence.id} step={step} onChanged={changed} />
                <div class="op-actions">
                  {index > 0 ? <button type="button" class="secondary" onClick={() => void move(index, index - 1)}>Move step {step.position} earlier</button> : null}
                  {index < last ? <button type="button" class="secondary" onClick={() => void move(index, index + 1)}>Move step {step.position} later</button> : null}
                </div>
              </li>
            )
          })}
        </ol>
      )}
      {orderError === undefined ? null : <RunningExplained error={orderError} sequence={sequence} />}
      <h3>Add a step</h3>
      <StepForm key={adding} id="new-step" step={undefined} onSave={async (write) => {
        await sequencesApi.addStep(sequence.id, write)
        setAdding((n) => n + 1)
        changed()
      }} />
    </section>
  )
}
