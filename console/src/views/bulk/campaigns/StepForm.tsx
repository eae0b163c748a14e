/**
 * A sequence step's form, to add one or edit one: when it goes (an offset from the previous step's
 * due time, from enrolment for the first) and its content (subject, text, HTML). Unsaved edits
 * warn before leaving.
 */
import { useState } from "preact/hooks"
import type { Step, StepWrite } from "../../../api/bulk-campaigns.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { LEAVE_QUESTION, useLeaveGuard } from "../../../components/use-leave-guard.ts"
import { useSubmit } from "../../../components/use-submit.ts"

const UNITS = [["seconds", 1], ["minutes", 60], ["hours", 3600], ["days", 86_400]] as const
type Unit = typeof UNITS[number][0]

/** The largest unit that divides the offset: 86,400 s shows as 1 day. */
const unitOf = (seconds: number): Unit => [...UNITS].reverse().find(([, size]) => seconds % size === 0 && seconds > 0)?.[0] ?? "seconds"
const sizeOf = (unit: Unit): number => UNITS.find(([name]) => name === unit)![1]

/** A duration as people say it: "5 s", "2 min", "1 d 3 h". */
export const duration = (seconds: number): string => {
  if (seconds === 0) return "0 s"
  const parts: Array<string> = []
  let left = seconds
  for (const [name, size] of [["d", 86_400], ["h", 3600], ["min", 60], ["s", 1]] as const) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)} ${name}`)
      left %= size
    }
  }
  return parts.slice(0, 2).join(" ")
}

export const StepForm = ({ id, onCancel, onSave, step }: {
  id: string
  step: Step | undefined
  onSave: (write: StepWrite) => Promise<unknown>
  onCancel?: () => void
}) => {
  const initialUnit = unitOf(step?.offset_seconds ?? 0)
  const [amount, setAmount] = useState(String((step?.offset_seconds ?? 0) / sizeOf(initialUnit)))
  const [unit, setUnit] = useState<Unit>(initialUnit)
  const [subject, setSubject] = useState(step?.subject ?? "")
  const [text, setText] = useState(step?.body_text ?? "")
  const [html, setHtml] = useState(step?.html ?? "")
  const [dirty, setDirty] = useState(false)
  useLeaveGuard(dirty)
  const edit = <T,>(setter: (value: T) => void) => (value: T) => {
    setter(value)
    setDirty(true)
  }
  const { busy, error, onSubmit } = useSubmit(async () => {
    const offset = Math.round(Number(amount) * sizeOf(unit))
    await onSave({
      offset_seconds: Number.isFinite(offset) ? offset : -1,
      subject: subject.trim() === "" ? null : subject,
      body_text: text.trim() === "" ? null : text,
      html: html.trim() === "" ? null : html,
      template_id: step?.template_id ?? null
    })
    setDirty(false)
  })
  return (
    <form onSubmit={onSubmit} class="cp-box" aria-label={step === undefined ? "New step" : `Edit step ${step.position}`}>
      <div class="sq-offset">
        <Field id={`${id}-amount`} label="Wait" type="number" value={amount} onValue={edit(setAmount)} required />
        <div class="field">
          <label for={`${id}-unit`}>Unit</label>
          <select id={`${id}-unit`} value={unit} onChange={(e) => edit(setUnit)(e.currentTarget.value as Unit)}>
            {UNITS.map(([name]) => <option key={name} value={name}>{name}</option>)}
          </select>
        </div>
      </div>
      <p class="cp-hint">After the previous step (after enrolment for the first step).</p>
      <Field id={`${id}-subject`} label="Subject" value={subject} onValue={edit(setSubject)} maxLength={998} />
      <div class="field">
        <label for={`${id}-text`}>Text</label>
        <textarea id={`${id}-text`} value={text} onInput={(e) => edit(setText)(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${id}-html`}>HTML (optional)</label>
        <textarea id={`${id}-html`} value={html} onInput={(e) => edit(setHtml)(e.currentTarget.value)} />
      </div>
      <div class="op-actions">
        <button type="submit" disabled={busy}>{step === undefined ? "Add step" : "Save step"}</button>
        {onCancel === undefined ? null : (
          <button type="button" class="secondary" onClick={() => {
            if (!dirty || window.confirm(LEAVE_QUESTION)) onCancel()
          }}>Close</button>
        )}
      </div>
      <ErrorMessage error={error} id={`${id}-error`} />
    </form>
  )
}
