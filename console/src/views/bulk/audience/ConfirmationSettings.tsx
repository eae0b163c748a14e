/**
 * A list's double opt-in (#29 view 2): on or off, the sender, the subject and the intro of the
 * confirmation mail (PUT /v1/bulk/lists/{id}/confirmation), and a preview of that mail as a new
 * member would get it (POST …/confirmation/preview). The subject and text are shown as text; the
 * HTML only inside an <iframe sandbox> with no permission at all (no scripts, an opaque origin),
 * through srcdoc: it inherits the console's CSP, so nothing remote loads in it either. Unsaved
 * settings warn before leaving.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../../api/client.ts"
import { type ConfirmationPreview, type ConfirmationSettings as Settings, listsApi, type MailingList } from "../../../api/bulk-audience.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { useLeaveGuard } from "../../../components/use-leave-guard.ts"
import { useSubmit } from "../../../components/use-submit.ts"

/** No permission at all: the preview's HTML can neither run a script nor reach the console. */
export const PREVIEW_FRAME_SANDBOX = ""

/** The settings' longest text (the API's Setting bound). */
const MAX_SETTING_LENGTH = 2000

interface Form {
  readonly on: boolean
  readonly fromEmail: string
  readonly fromName: string
  readonly subject: string
  readonly intro: string
}

const formOf = (list: MailingList): Form => ({
  on: list.require_confirmation === 1,
  fromEmail: list.confirm_from_email ?? "",
  fromName: list.confirm_from_name ?? "",
  subject: list.confirm_subject ?? "",
  intro: list.confirm_intro ?? ""
})

/** An empty field clears the setting: the API's default subject and intro apply. */
const orNull = (text: string): string | null => (text.trim() === "" ? null : text)

const settingsOf = (form: Form): Settings => ({
  require_confirmation: form.on,
  confirm_from_email: orNull(form.fromEmail),
  confirm_from_name: orNull(form.fromName),
  confirm_subject: orNull(form.subject),
  confirm_intro: orNull(form.intro)
})

const sameForm = (a: Form, b: Form) =>
  a.on === b.on && a.fromEmail === b.fromEmail && a.fromName === b.fromName && a.subject === b.subject && a.intro === b.intro

/** The API's refusal about one setting (its `param`), to show under that field. */
const aboutParam = (error: unknown, param: string): string | undefined =>
  error instanceof ApiError && error.param === param ? error.message : undefined

const Preview = ({ preview }: { preview: ConfirmationPreview }) => (
  <div class="confirmation-preview" aria-label="Confirmation mail preview" role="group">
    <p><strong>Subject:</strong> <span class="preview-subject">{preview.subject}</span></p>
    <h4 id="preview-text-heading">Text part</h4>
    <pre class="message-text" tabIndex={0} aria-labelledby="preview-text-heading">{preview.text}</pre>
    <h4>HTML part</h4>
    <iframe class="preview-html" title="The confirmation mail's HTML part" sandbox={PREVIEW_FRAME_SANDBOX} referrerpolicy="no-referrer" srcdoc={preview.html} />
  </div>
)

const PreviewButton = ({ list, dirty }: { list: MailingList; dirty: boolean }) => {
  const [preview, setPreview] = useState<ConfirmationPreview | undefined>(undefined)
  const { busy, error, onSubmit } = useSubmit(async () => setPreview(await listsApi.previewConfirmation(list.id)))
  return (
    <form aria-label="Preview the confirmation mail" onSubmit={onSubmit}>
      <button type="submit" class="secondary" disabled={busy || dirty} aria-describedby={dirty ? "preview-hint" : undefined}>
        Preview the confirmation mail
      </button>
      {dirty ? <p id="preview-hint" class="hint">Save the settings first: the preview shows the saved ones.</p> : null}
      <ErrorMessage error={error} id="confirmation-preview-error" />
      {preview === undefined ? null : <Preview preview={preview} />}
    </form>
  )
}

export const ConfirmationSettings = ({ list, onSaved }: { list: MailingList; onSaved: () => void }) => {
  const [form, setForm] = useState<Form>(() => formOf(list))
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch })
  const dirty = !sameForm(form, formOf(list))
  useLeaveGuard(dirty)
  const { busy, error, onSubmit } = useSubmit(async () => {
    // The form starts again from what the API kept (a blank setting comes back as its default).
    setForm(formOf(await listsApi.configure(list.id, settingsOf(form))))
    onSaved()
  })
  const fieldError = (param: string) => aboutParam(error, param)
  const named = ["confirm_from_email", "confirm_from_name", "confirm_subject", "confirm_intro"]
  const formError = error instanceof ApiError && error.param !== undefined && named.includes(error.param) ? undefined : error
  return (
    <section class="part" aria-labelledby="list-confirmation">
      <h3 id="list-confirmation">Double opt-in</h3>
      <form class="settings-form" aria-labelledby="list-confirmation" onSubmit={onSubmit}>
        <label class="checkbox">
          <input type="checkbox" checked={form.on} onChange={(e) => set({ on: e.currentTarget.checked })} />
          Require confirmation: new members get a mail and stay pending until they confirm
        </label>
        <Field id="confirm-from-email" label="Sender address (its domain verified)" type="email" maxLength={320}
          value={form.fromEmail} onValue={(fromEmail) => set({ fromEmail })} error={fieldError("confirm_from_email")} />
        <Field id="confirm-from-name" label="Sender name" maxLength={MAX_SETTING_LENGTH}
          value={form.fromName} onValue={(fromName) => set({ fromName })} error={fieldError("confirm_from_name")} />
        <Field id="confirm-subject" label="Subject (empty: “Please confirm your subscription to …”)" maxLength={MAX_SETTING_LENGTH}
          value={form.subject} onValue={(subject) => set({ subject })} error={fieldError("confirm_subject")} />
        <div class="field">
          <label for="confirm-intro">Intro (empty: the default text; variables such as {"{{list_name}}"} work)</label>
          <textarea id="confirm-intro" maxLength={MAX_SETTING_LENGTH} value={form.intro}
            onInput={(e) => set({ intro: e.currentTarget.value })}
            aria-invalid={fieldError("confirm_intro") === undefined ? undefined : true}
            aria-describedby={fieldError("confirm_intro") === undefined ? undefined : "confirm-intro-error"} />
          {fieldError("confirm_intro") === undefined ? null : <p class="error" id="confirm-intro-error">{fieldError("confirm_intro")}</p>}
        </div>
        <div class="actions">
          <button type="submit" disabled={busy || !dirty}>Save double opt-in</button>
          {dirty ? <span class="hint">Unsaved changes</span> : null}
        </div>
        <ErrorMessage error={formError} id="confirmation-error" />
      </form>
      <PreviewButton list={list} dirty={dirty} />
    </section>
  )
}
