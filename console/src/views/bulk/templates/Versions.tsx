/**
 * A template's versions (newest first; the API keeps `max` of them): each compared with the
 * editor's content as a line diff (jsdiff's diffLines, shown as text with + and - marks, never as
 * HTML), and restored (the API stores the restore as a new version).
 */
import { type Change, diffLines } from "diff"
import { useState } from "preact/hooks"
import { type Template, type TemplateContent, type TemplateVersion, templatesApi } from "../../../api/bulk-templates.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { bytes } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { When } from "../../../components/When.tsx"
import { useLoad } from "../../../components/use-load.ts"

const FIELDS: ReadonlyArray<{ title: string; of: (content: TemplateContent) => string }> = [
  { title: "Subject", of: (c) => c.subject },
  { title: "HTML", of: (c) => c.html },
  { title: "MJML", of: (c) => c.mjml ?? "" },
  { title: "Text", of: (c) => c.body_text }
]

const markOf = (change: Change) => (change.added ? "+ " : change.removed ? "- " : "  ")

/** One field's diff: every line marked (+ only in the editor, - only in the version). */
const FieldDiff = ({ changes, title }: { changes: ReadonlyArray<Change>; title: string }) => (
  <div class="diff-field">
    <h4>{title}</h4>
    <pre class="diff" tabIndex={0} aria-label={`${title}: differences`}>
      {changes.flatMap((change, i) =>
        change.value.replace(/\n$/, "").split("\n").map((line, j) => (
          <span key={`${i}-${j}`} class={change.added ? "diff-added" : change.removed ? "diff-removed" : "diff-same"}>
            {markOf(change)}{line}{"\n"}
          </span>
        )))}
    </pre>
  </div>
)

const VersionDiff = ({ current, version }: { version: TemplateVersion; current: TemplateContent }) => {
  const fields = FIELDS.map((field) => ({ title: field.title, changes: diffLines(field.of(version), field.of(current)) }))
  const changed = fields.filter((field) => field.changes.some((change) => change.added === true || change.removed === true))
  return (
    <section class="version-diff" aria-labelledby="version-diff-heading">
      <h3 id="version-diff-heading">Version {version.id} compared with the editor</h3>
      <p class="hint">Lines marked − are only in version {version.id}; lines marked + only in the editor.</p>
      {changed.length === 0 ? <p>No difference.</p> : changed.map((field) => <FieldDiff key={field.title} {...field} />)}
    </section>
  )
}

export const Versions = ({ current, onRestored, templateId, unsaved, updatedAt }: {
  templateId: string
  /** The editor's content, what a version is compared with. */
  current: TemplateContent
  /** Asks the history again after a save. */
  updatedAt: string
  unsaved: boolean
  onRestored: (template: Template) => void
}) => {
  const versions = useLoad(() => templatesApi.versions(templateId), [templateId, updatedAt])
  const [compared, setCompared] = useState<number | undefined>(undefined)
  const version = useLoad(
    () => (compared === undefined ? Promise.resolve(undefined) : templatesApi.version(templateId, compared)),
    [templateId, compared]
  )
  const list = versions.data
  return (
    <section class="versions" aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <LoadStatus loaded={versions} what="the versions" />
      {list === undefined ? null : (
        <>
          <p class="hint">The newest {list.max} versions are kept; restoring one stores it as a new version.</p>
          <ScrollTable label="Version history">
            <table aria-busy={versions.loading}>
              <thead>
                <tr><th scope="col">Version</th><th scope="col">Saved</th><th scope="col">Subject</th><th scope="col" class="num">HTML</th><th scope="col">Actions</th></tr>
              </thead>
              <tbody>
                {list.items.map((entry) => (
                  <tr key={entry.id}>
                    <td>{entry.id}</td>
                    <td><When iso={entry.created_at} /></td>
                    <td class="wrap">{entry.subject === "" ? "—" : entry.subject}</td>
                    <td class="num">{bytes(entry.html_bytes)}</td>
                    <td class="version-actions">
                      <button type="button" class="secondary" aria-pressed={compared === entry.id} onClick={() => setCompared(entry.id)}>
                        Compare version {entry.id}
                      </button>
                      <ActionButton
                        run={() => templatesApi.restore(templateId, entry.id)}
                        onDone={onRestored}
                        confirm={unsaved ? `Restore version ${entry.id}? Your unsaved edits are replaced.` : `Restore version ${entry.id}?`}
                      >
                        Restore version {entry.id}
                      </ActionButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
        </>
      )}
      <LoadStatus loaded={version} what="the version" />
      {version.data === undefined ? null : <VersionDiff version={version.data} current={current} />}
    </section>
  )
}
