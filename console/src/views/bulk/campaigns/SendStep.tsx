/**
 * The flow's last step: a test-send to one address, then send now or at a time in the viewer's
 * own zone (sent to the API as ISO UTC). The draft is saved first, so what is sent is what is shown.
 */
import { useState } from "preact/hooks"
import { testSend } from "../../../api/bulk-campaigns.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { useSubmit } from "../../../components/use-submit.ts"
import { type FlowForm, fromAddress } from "./draft.ts"

/** The viewer's zone, named beside the time input so "9:00" is never ambiguous. */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

/** A datetime-local value (the viewer's wall clock) as ISO UTC; undefined when it is not a time. */
export const isoOfLocal = (value: string): string | undefined => {
  const date = new Date(value)
  return value === "" || Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

const TestSend = ({ form }: { form: FlowForm }) => {
  const [to, setTo] = useState("")
  const [sent, setSent] = useState<string | undefined>(undefined)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setSent(undefined)
    const answer = await testSend({
      to: to.trim(),
      from_email: fromAddress(form) ?? "",
      from_name: form.fromName.trim() === "" ? null : form.fromName.trim(),
      template_id: form.content === "template" ? form.templateId : null,
      subject: form.subject,
      html: form.html,
      body_text: form.text
    })
    setSent(`A test was queued to ${to.trim()} (message ${answer.message_id}).`)
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

export const SendStep = ({ form, onSend }: { form: FlowForm; onSend: (scheduledAt: string | undefined) => Promise<void> }) => {
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
      <TestSend form={form} />
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
