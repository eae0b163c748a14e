/**
 * The flow's last step: a test-send to one address, then send now or at a time in the viewer's
 * own zone (sent to the API as ISO UTC). The draft is saved first, so what is sent is what is shown.
 */
import { useState } from "preact/hooks"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { useSubmit } from "../../../components/use-submit.ts"
import type { FlowForm } from "./draft.ts"

/** The viewer's zone, named beside the time input so "9:00" is never ambiguous. */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

/** A datetime-local value (the viewer's wall clock) as ISO UTC; undefined when it is not a time. */
export const isoOfLocal = (value: string): string | undefined => {
  const date = new Date(value)
  return value === "" || Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** `onTest` saves the draft first, then test-sends the saved campaign: what is tested is what is shown. */
const TestSend = ({ onTest }: { onTest: (to: string) => Promise<{ message_ids: ReadonlyArray<string> }> }) => {
  const [to, setTo] = useState("")
  const [sent, setSent] = useState<string | undefined>(undefined)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setSent(undefined)
    const answer = await onTest(to.trim())
    setSent(`A test was queued to ${to.trim()} (message ${answer.message_ids[0] ?? ""}).`)
  })
  return (
    <form onSubmit={onSubmit} aria-labelledby="test-send-heading" class="cp-box">
      <h3 id="test-send-heading">Test-send</h3>
      <Field id="test-to" label="Send a test to" type="email" value={to} onValue={setTo} required maxLength={320} />
      <button type="submit" disabled={busy}>Send test</button>
      {sent === undefined ? null : <p role="status">{sent}</p>}
      <ErrorMessage error={error} id="test-send-error" />
    </form>
  )
}

export const SendStep = ({ onSend, onTest }: {
  form: FlowForm
  onSend: (scheduledAt: string | undefined) => Promise<void>
  onTest: (to: string) => Promise<{ message_ids: ReadonlyArray<string> }>
}) => {
  const [when, setWhen] = useState<"now" | "later">("now")
  const [at, setAt] = useState("")
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setProblem(undefined)
    if (when === "now") return onSend(undefined)
    const iso = isoOfLocal(at)
    if (iso === undefined) return setProblem("Choose the date and time to send at.")
    return onSend(iso)
  })
  return (
    <div>
      <TestSend onTest={onTest} />
      <form onSubmit={onSubmit} aria-labelledby="send-heading" class="cp-box">
        <h3 id="send-heading">Send</h3>
        <fieldset class="cp-choice">
          <legend>When</legend>
          <label><input type="radio" name="send-when" value="now" checked={when === "now"} onChange={() => setWhen("now")} />Now</label>
          <label><input type="radio" name="send-when" value="later" checked={when === "later"} onChange={() => setWhen("later")} />At a time</label>
        </fieldset>
        {when === "later"
          ? <Field id="send-at" label={`Send at (your time, ${ZONE})`} type="datetime-local" value={at} onValue={setAt} error={problem} />
          : null}
        <button type="submit" disabled={busy}>{when === "now" ? "Send now" : "Schedule"}</button>
        <ErrorMessage error={error} id="send-error" />
      </form>
    </div>
  )
}
