/**
 * Import (#29 view 1): choose a CSV file or paste rows → the preview (read by a worker off the
 * page's main thread, checked by the API's import-preview) as tables → confirm → the upload's
 * progress → the counts the import answered. The file is uploaded as it is (the API parses it, off
 * its own main thread too): a MAX_JSON_MB file goes through without freezing the page.
 */
import { useEffect, useState } from "preact/hooks"
import { type ImportResult, uploadCsv } from "../../../api/bulk-contacts.ts"
import { ApiError } from "../../../api/client.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { bytes, count } from "../../../components/format.ts"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { hrefOf, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { GateExplained, gateTrips, ImportPreviewTable } from "./ImportPreviewTable.tsx"
import { type PreviewSummary, previewCsv } from "./preview-worker.ts"

type Step =
  | { readonly kind: "choose"; readonly error?: unknown }
  | { readonly kind: "previewing" }
  | { readonly kind: "previewed"; readonly csv: Blob; readonly summary: PreviewSummary; readonly error?: unknown }
  | { readonly kind: "uploading"; readonly sent: number; readonly total: number }
  | { readonly kind: "done"; readonly result: ImportResult }

const Source = ({ onPreview }: { onPreview: (csv: Blob) => void }) => {
  const [file, setFile] = useState<File | undefined>(undefined)
  const [pasted, setPasted] = useState("")
  return (
    <form class="import-source" aria-label="CSV to import" onSubmit={(event) => {
      event.preventDefault()
      const csv = file ?? (pasted.trim() === "" ? undefined : new Blob([pasted], { type: "text/csv" }))
      if (csv !== undefined) onPreview(csv)
    }}>
      <p>
        A header row names the columns: <code>email</code> (required), <code>name</code>, <code>tags</code> (separated
        by <code>;</code>); every other column becomes a custom field.
      </p>
      <div class="field">
        <label for="import-file">CSV file</label>
        <input id="import-file" type="file" accept=".csv,text/csv" onChange={(e) => setFile(e.currentTarget.files?.[0])} />
      </div>
      <div class="field">
        <label for="import-paste">Or paste rows</label>
        <textarea id="import-paste" value={pasted} spellcheck={false} placeholder={"email,name,tags\nada@example.com,Ada,newsletter;vip"}
          onInput={(e) => setPasted(e.currentTarget.value)} />
      </div>
      <button type="submit" disabled={file === undefined && pasted.trim() === ""}>Preview the import</button>
    </form>
  )
}

const Options = ({ tags, updateExisting, onTags, onUpdateExisting }: {
  tags: string
  updateExisting: boolean
  onTags: (tags: string) => void
  onUpdateExisting: (on: boolean) => void
}) => (
  <fieldset class="import-options">
    <legend>Options</legend>
    <label class="checkbox">
      <input type="checkbox" checked={updateExisting} onChange={(e) => onUpdateExisting(e.currentTarget.checked)} />
      Update existing contacts (name replaced, tags added, custom fields merged); otherwise they are left as they are
    </label>
    <div class="field">
      <label for="import-tags">Tags added to every imported contact (comma-separated)</label>
      <input id="import-tags" type="text" maxLength={1000} value={tags} onInput={(e) => onTags(e.currentTarget.value)} />
    </div>
  </fieldset>
)

const Progress = ({ sent, total }: { sent: number; total: number }) => (
  <div class="import-progress">
    <label for="import-upload">Uploading</label>
    <progress id="import-upload" max={Math.max(total, 1)} value={sent}>{bytes(sent)}</progress>
    <p role="status">
      {sent < total ? `${bytes(sent)} of ${bytes(total)} sent` : `${bytes(total)} sent: the appliance is reading and importing it…`}
    </p>
  </div>
)

const Result = ({ result }: { result: ImportResult }) => (
  <section class="part" aria-labelledby="import-result">
    <h2 id="import-result">Imported</h2>
    <ScrollTable label="Import counts">
      <table class="import-counts">
        <tbody>
          <tr><th scope="row">Created</th><td class="num">{count(result.created)}</td></tr>
          <tr><th scope="row">Updated</th><td class="num">{count(result.updated)}</td></tr>
          <tr><th scope="row">Skipped (already contacts)</th><td class="num">{count(result.skipped)}</td></tr>
          <tr><th scope="row">Invalid (left out)</th><td class="num">{count(result.invalid)}</td></tr>
        </tbody>
      </table>
    </ScrollTable>
    {result.errors.length === 0 ? null : (
      <ScrollTable label="Rows left out">
        <table>
          <thead><tr><th scope="col" class="num">Row</th><th scope="col">Email</th><th scope="col">Reason</th></tr></thead>
          <tbody>
            {result.errors.map((row) => <tr key={row.row}><td class="num">{row.row}</td><td class="wrap">{row.email}</td><td class="wrap">{row.reason}</td></tr>)}
          </tbody>
        </table>
      </ScrollTable>
    )}
    <p><a href={hrefOf("contacts")} onClick={onLinkClick("contacts")}>See the contacts</a></p>
  </section>
)

/** While the upload runs, leaving the page would cut it off: the browser asks first. */
const useUploadGuard = (uploading: boolean) =>
  useEffect(() => {
    if (!uploading) return
    const ask = (event: BeforeUnloadEvent) => event.preventDefault()
    window.addEventListener("beforeunload", ask)
    return () => window.removeEventListener("beforeunload", ask)
  }, [uploading])

export const ImportView = () => {
  const session = useSignedIn()
  const [step, setStep] = useState<Step>({ kind: "choose" })
  const [tags, setTags] = useState("")
  const [updateExisting, setUpdateExisting] = useState(false)
  useUploadGuard(step.kind === "uploading")
  // Another key is another set of contacts: a preview made for the previous key no longer holds.
  useEffect(() => setStep({ kind: "choose" }), [session.active_key_id])

  const preview = (csv: Blob) => {
    setStep({ kind: "previewing" })
    previewCsv(csv, session.csrf_token).then(
      (summary) => setStep({ kind: "previewed", csv, summary }),
      (error: unknown) => setStep({ kind: "choose", error })
    )
  }
  const confirm = (csv: Blob, summary: PreviewSummary) => {
    setStep({ kind: "uploading", sent: 0, total: csv.size })
    const options = { updateExisting, tags: tags.split(",").map((t) => t.trim()).filter((t) => t !== "") }
    uploadCsv(csv, options, session.csrf_token, (sent, total) => setStep({ kind: "uploading", sent, total })).done.then(
      (result) => setStep({ kind: "done", result }),
      (error: unknown) => setStep({ kind: "previewed", csv, summary, error })
    )
  }

  return (
    <>
      <a class="back" href={hrefOf("contacts")} onClick={onLinkClick("contacts")}>← All contacts</a>
      <h2>Import contacts</h2>
      {step.kind === "choose" ? (
        <>
          <Source onPreview={preview} />
          <ErrorMessage error={step.error} id="import-source-error" />
        </>
      ) : null}
      {step.kind === "previewing" ? <p role="status">Reading the file and checking its addresses…</p> : null}
      {step.kind === "previewed" ? (
        <section class="part" aria-labelledby="import-preview">
          <h2 id="import-preview">Preview</h2>
          {gateTrips(step.summary) ? <GateExplained summary={step.summary} /> : null}
          <ImportPreviewTable summary={step.summary} />
          <Options tags={tags} updateExisting={updateExisting} onTags={setTags} onUpdateExisting={setUpdateExisting} />
          {step.error instanceof ApiError && step.error.code === "too_many_invalid_recipients" ? <GateExplained summary={step.summary} /> : null}
          <ErrorMessage error={step.error} id="import-error" />
          <div class="actions">
            <button type="button" disabled={gateTrips(step.summary) || step.summary.rows === 0} onClick={() => confirm(step.csv, step.summary)}>
              Import {count(step.summary.uniqueAddresses - step.summary.invalidCount)} valid addresses
            </button>
            <button type="button" class="secondary" onClick={() => setStep({ kind: "choose" })}>Choose another file</button>
          </div>
        </section>
      ) : null}
      {step.kind === "uploading" ? <Progress sent={step.sent} total={step.total} /> : null}
      {step.kind === "done" ? <Result result={step.result} /> : null}
    </>
  )
}
