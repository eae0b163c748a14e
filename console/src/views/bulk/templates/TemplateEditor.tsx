/**
 * One template's editor: name and subject, the three sources (SourceEditors), the variables as
 * JSON (the template's defaults, used by the preview and the test-send), the live preview, then —
 * once saved — its versions and the test-send. Edits not yet saved ask before the page or the view
 * is left (useUnsavedEdits).
 */
import { useMemo, useRef, useState } from "preact/hooks"
import { type SampleVars, type Template, templatesApi } from "../../../api/bulk-templates.ts"
import { ApiError } from "../../../api/client.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { useUnsavedEdits } from "../../../components/use-unsaved-edits.ts"
import { hrefOf, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { contentOf, type Draft, draftOf, EMPTY_DRAFT, parseVars, sameDraft, toSave } from "./draft.ts"
import { fieldErrorOf, PreviewPane, usePreview } from "./PreviewPane.tsx"
import { type FieldError, SourceEditors } from "./SourceEditors.tsx"
import { TestSendForm } from "./TestSendForm.tsx"
import { Versions } from "./Versions.tsx"

const VarsField = ({ error, onValue, value }: { value: string; error: string | undefined; onValue: (value: string) => void }) => (
  <div class="field vars-field">
    <label for="template-vars">Variables (JSON: the template's defaults, used by the preview and the test-send)</label>
    <textarea
      id="template-vars"
      value={value}
      rows={5}
      spellcheck={false}
      aria-invalid={error === undefined ? undefined : true}
      aria-describedby={error === undefined ? undefined : "template-vars-error"}
      onInput={(event) => onValue(event.currentTarget.value)}
    />
    {error === undefined ? null : <p class="error" id="template-vars-error" role="alert">{error}</p>}
  </div>
)

const Editor = ({ onSaved, template }: { template: Template | undefined; onSaved: (template: Template) => void }) => {
  const session = useSignedIn()
  const [baseline, setBaseline] = useState<Draft>(() => (template === undefined ? EMPTY_DRAFT : draftOf(template)))
  const [draft, setDraft] = useState<Draft>(baseline)
  const unsaved = !sameDraft(draft, baseline)
  useUnsavedEdits(unsaved)

  const parsed = parseVars(draft.vars)
  // While the JSON is being typed and does not parse, the preview keeps the last variables that did.
  const lastVars = useRef<SampleVars>({})
  if (parsed.ok) lastVars.current = parsed.value
  const content = useMemo(() => contentOf(draft), [draft.subject, draft.html, draft.body_text, draft.mjml])
  const preview = usePreview(content, lastVars.current, session.active_key_id)

  const reset = (saved: Template) => {
    const next = draftOf(saved)
    setBaseline(next)
    setDraft(next)
    onSaved(saved)
  }
  const save = useSubmit(async () => {
    if (!parsed.ok) throw new Error(parsed.message)
    const saved = template === undefined
      ? await templatesApi.create(toSave(draft, parsed.value))
      : await templatesApi.update(template.id, toSave(draft, parsed.value))
    reset(saved)
    // A new template gets its own address (replacing templates/new), with its versions below.
    if (template === undefined) window.history.replaceState(null, "", hrefOf(`templates/${encodeURIComponent(saved.id)}`))
  })
  const set = (field: keyof Draft) => (value: string) => setDraft((before) => ({ ...before, [field]: value }))

  // The engine's error about a field: the preview's (as typed), else the last save's.
  const sourceError: FieldError | undefined = fieldErrorOf(preview.error) ?? fieldErrorOf(save.error)
  const nameError = save.error instanceof ApiError && save.error.param === "name" ? save.error.message : undefined
  const subjectError = sourceError?.param === "subject" ? sourceError.message : undefined
  return (
    <>
      <form class="template-form" onSubmit={save.onSubmit} aria-labelledby="editor-heading">
        <h2 id="editor-heading">{template === undefined ? "New template" : `Editing ${template.name}`}</h2>
        <div class="template-meta">
          <Field id="template-name" label="Name" value={draft.name} onValue={set("name")} required maxLength={200} error={nameError} />
          <Field id="template-subject" label="Subject" value={draft.subject} onValue={set("subject")} maxLength={998} error={subjectError} />
        </div>
        <SourceEditors draft={draft} error={sourceError?.param === "subject" ? undefined : sourceError} onValue={(field, value) => set(field)(value)} />
        <VarsField value={draft.vars} onValue={set("vars")} error={parsed.ok ? undefined : parsed.message} />
        <div class="save-bar">
          <button type="submit" disabled={save.busy}>{save.busy ? "Saving…" : template === undefined ? "Create template" : "Save"}</button>
          <span role="status" class="save-state">{unsaved ? "Unsaved edits" : template === undefined ? "" : "All edits saved"}</span>
          <ErrorMessage error={save.error} id="template-save-error" />
        </div>
      </form>
      <PreviewPane preview={preview} />
      {template === undefined ? null : (
        <>
          <Versions templateId={template.id} current={content} updatedAt={template.updated_at} unsaved={unsaved} onRestored={reset} />
          <TestSendForm templateId={template.id} defaultFrom={template.from_email} vars={parsed.ok ? parsed.value : undefined} unsaved={unsaved} />
        </>
      )}
    </>
  )
}

export const TemplateEditor = ({ id }: { id: string | undefined }) => {
  const session = useSignedIn()
  const loaded = useLoad(() => (id === undefined ? Promise.resolve(undefined) : templatesApi.read(id)), [id, session.active_key_id])
  // The template as last saved here (a save or restore answers with it), else as loaded.
  const [saved, setSaved] = useState<Template | undefined>(undefined)
  const template = saved ?? loaded.data
  return (
    <div class="template-editor">
      <a class="back" href={hrefOf("templates")} onClick={onLinkClick("templates")}>← All templates</a>
      {loaded.error === undefined ? null : <ErrorMessage error={loaded.error} />}
      {id !== undefined && template === undefined && loaded.error === undefined ? <p role="status">Loading the template…</p> : null}
      {id === undefined || template !== undefined
        ? <Editor key={template?.id ?? "new"} template={template} onSaved={setSaved} />
        : null}
      {template === undefined ? null : (
        <p class="hint">Created <time dateTime={template.created_at}>{template.created_at.slice(0, 10)}</time> · id {template.id}</p>
      )}
    </div>
  )
}
