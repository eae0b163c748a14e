/**
 * Test-send: the SAVED template rendered with the sample variables and sent to one address
 * ([Test] subject, no tracking; docs/bulk.md "Bulk templates"). The sender is the template's own or one
 * given here; its domain must be verified (simulator recipients: any domain the account added).
 */
import { useState } from "preact/hooks"
import { type SampleVars, templatesApi } from "../../../api/bulk-templates.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { useSubmit } from "../../../components/use-submit.ts"
import { hrefOf } from "../../../router.ts"

export const TestSendForm = ({ defaultFrom, templateId, unsaved, vars }: {
  templateId: string
  defaultFrom: string | null
  vars: SampleVars | undefined
  unsaved: boolean
}) => {
  const [to, setTo] = useState("")
  const [from, setFrom] = useState(defaultFrom ?? "")
  const [sent, setSent] = useState<{ id: string; to: string } | undefined>(undefined)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setSent(undefined)
    const answer = await templatesApi.testSend(templateId, {
      to_email: to.trim(),
      sample_vars: vars ?? {},
      ...(from.trim() === "" ? {} : { from_email: from.trim() })
    })
    setSent({ id: answer.message_id, to: answer.to })
  })
  return (
    <section class="test-send" aria-labelledby="test-send-heading">
      <h2 id="test-send-heading">Test-send</h2>
      <p class="hint">
        Sends the saved template with the variables above{unsaved ? " — save your edits first to send them" : ""}. Simulator
        addresses such as delivered@simulator.herald.invalid cost nothing.
      </p>
      <form onSubmit={onSubmit} aria-describedby="test-send-error">
        <Field id="test-send-to" label="Send a test to" type="email" value={to} onValue={setTo} required maxLength={320} />
        <Field id="test-send-from" label="From address (empty: the template's own)" type="email" value={from} onValue={setFrom} maxLength={320} />
        <button type="submit" disabled={busy}>{busy ? "Sending…" : "Send test"}</button>
        <ErrorMessage error={error} id="test-send-error" />
      </form>
      {sent === undefined ? null : (
        <p role="status">
          Test queued for {sent.to}:{" "}
          <a href={hrefOf(`messages/${sent.id}`)} target="_blank" rel="noopener">see message {sent.id}</a> (opens in a new tab)
        </p>
      )}
    </section>
  )
}
