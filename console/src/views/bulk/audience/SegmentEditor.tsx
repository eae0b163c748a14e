/**
 * The segment builder (#29 view 3): a name, match all / any, the rules (RuleRow.tsx), and as they
 * change a live count and a sample of matching contacts. The preview is asked once typing pauses
 * (useDebounced, 400 ms), only the newest answer is shown (useLoad drops older ones), and its cost
 * is the API's to bound: a sample of PREVIEW_SAMPLE contacts, and a count that runs past the
 * appliance's query deadline answers 422 query_too_expensive, shown beside the count. Only complete
 * rules are previewed (a half-typed one is no error yet); a refusal naming a rule
 * (`rules.rules[2].days`) shows under that rule. Unsaved rules warn before leaving.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../../api/client.ts"
import { listsApi, MAX_LIST_PAGE, MAX_RULES, type Segment, type SegmentPreview, type SegmentRules, segmentsApi } from "../../../api/bulk-audience.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { count } from "../../../components/format.ts"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useDebounced } from "../../../components/use-debounced.ts"
import { useLeaveGuard } from "../../../components/use-leave-guard.ts"
import { type Loaded, useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { navigate } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { draftOf, isComplete, newDraft, type RuleDraft, ruleOf, RuleRow } from "./RuleRow.tsx"

/** The rule an API error names (`rules.rules[2].op` → 2), else undefined. */
const ruleIndexOf = (error: unknown): number | undefined => {
  const found = error instanceof ApiError ? /^rules\.rules\[(\d+)\]/.exec(error.param ?? "") : null
  return found === null ? undefined : Number(found[1])
}

const rulesOf = (match: SegmentRules["match"], drafts: ReadonlyArray<RuleDraft>): SegmentRules => ({ match, rules: drafts.map(ruleOf) })

/** The live count and sample for the newest rules answered; `updating` while newer ones are asked or typed. */
const LivePreview = ({ preview, updating }: { preview: Loaded<SegmentPreview>; updating: boolean }) => {
  const shown = preview.data
  // A refusal naming a rule shows under that rule; any other (422 query_too_expensive) beside the count.
  const error = ruleIndexOf(preview.error) === undefined ? preview.error : undefined
  return (
    <section class="part segment-preview" aria-labelledby="segment-preview">
      <h2 id="segment-preview">Matching contacts</h2>
      <p role="status" class="segment-count" aria-busy={updating}>
        {shown === undefined
          ? (preview.error === undefined ? "Counting…" : "No count: see the message.")
          : `${count(shown.total)} ${shown.total === 1 ? "contact matches" : "contacts match"}, ${count(shown.sendable)} sendable`}
        {updating ? <span class="hint"> (updating…)</span> : null}
      </p>
      <ErrorMessage error={error} id="segment-preview-error" />
      {shown === undefined || shown.sample.length === 0 ? null : (
        <ScrollTable label="Sample of matching contacts">
          <table aria-busy={updating}>
            <thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Status</th></tr></thead>
            <tbody>
              {shown.sample.map((contact) => (
                <tr key={contact.email}><td>{contact.email}</td><td class="wrap">{contact.name ?? ""}</td><td>{contact.status}</td></tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
    </section>
  )
}

/** The message of `error` when it names rule `index`. */
const aboutRule = (error: unknown, index: number): string | undefined =>
  ruleIndexOf(error) === index && error instanceof ApiError ? error.message : undefined

export const SegmentEditor = ({ segment, onSaved }: { segment: Segment | undefined; onSaved: () => void }) => {
  const session = useSignedIn()
  const [name, setName] = useState(segment?.name ?? "")
  const [match, setMatch] = useState<SegmentRules["match"]>(segment?.rules.match ?? "all")
  const [drafts, setDrafts] = useState<ReadonlyArray<RuleDraft>>(() => segment?.rules.rules.map(draftOf) ?? [])
  const lists = useLoad(() => listsApi.page(MAX_LIST_PAGE, 0), [session.active_key_id])
  const listItems = lists.data?.items ?? []
  const rules = rulesOf(match, drafts)
  const savedKey = segment === undefined ? undefined : JSON.stringify({ name: segment.name, rules: rulesOf(segment.rules.match, segment.rules.rules.map(draftOf)) })
  const dirty = JSON.stringify({ name, rules }) !== (savedKey ?? JSON.stringify({ name: "", rules: rulesOf("all", []) }))
  useLeaveGuard(dirty)

  // The preview counts the complete rules; `indices` maps its answer's rules.rules[k] back to the form's rule.
  const indices = drafts.flatMap((draft, i) => (isComplete(draft) ? [i] : []))
  const previewText = JSON.stringify({ rules: rulesOf(match, indices.map((i) => drafts[i]!)), indices })
  const asked = useDebounced(previewText)
  const preview = useLoad(() => {
    const { rules: counted } = JSON.parse(asked) as { rules: SegmentRules }
    return segmentsApi.preview(counted)
  }, [asked, session.active_key_id])
  const updating = preview.loading || asked !== previewText
  const previewRule = (i: number): string | undefined => {
    const k = ruleIndexOf(preview.error)
    const askedIndices = (JSON.parse(asked) as { indices: Array<number> }).indices
    return k !== undefined && askedIndices[k] === i && preview.error instanceof ApiError ? preview.error.message : undefined
  }

  const save = useSubmit(async () => {
    if (segment === undefined) {
      const created = await segmentsApi.create(name, rules)
      navigate(`segments/${encodeURIComponent(created.id)}`)
    } else {
      await segmentsApi.update(segment.id, name, rules)
      onSaved()
    }
  })
  const saveRule = ruleIndexOf(save.error)
  const nameError = save.error instanceof ApiError && save.error.param === "name" ? save.error.message : undefined
  const setDraft = (i: number, next: RuleDraft) => setDrafts(drafts.map((d, j) => (j === i ? next : d)))

  return (
    <div class="segment-editor">
      <form aria-label={segment === undefined ? "New segment" : `Segment ${segment.name}`} onSubmit={save.onSubmit}>
        <Field id="segment-name" label="Segment name" value={name} onValue={setName} required maxLength={200} error={nameError} />
        <fieldset class="match">
          <legend>Contacts must match</legend>
          <label class="checkbox"><input type="radio" name="match" value="all" checked={match === "all"} onChange={() => setMatch("all")} /> all rules</label>
          <label class="checkbox"><input type="radio" name="match" value="any" checked={match === "any"} onChange={() => setMatch("any")} /> any rule</label>
        </fieldset>
        <ErrorMessage error={lists.error} />
        {drafts.map((draft, i) => (
          <RuleRow key={i} index={i} draft={draft} lists={listItems}
            error={aboutRule(save.error, i) ?? previewRule(i)}
            onChange={(next) => setDraft(i, next)} onRemove={() => setDrafts(drafts.filter((_, j) => j !== i))} />
        ))}
        {drafts.length === 0 ? <p>No rules: {match === "all" ? "every contact of the key matches" : "no contact matches"}.</p> : null}
        <div class="actions">
          <button type="button" class="secondary" disabled={drafts.length >= MAX_RULES}
            onClick={() => setDrafts([...drafts, newDraft("tag", listItems[0]?.id ?? "")])}>Add rule</button>
          <button type="submit" disabled={save.busy || !dirty}>{segment === undefined ? "Save segment" : "Save changes"}</button>
          {dirty ? <span class="hint">Unsaved changes</span> : null}
        </div>
        {saveRule === undefined && nameError === undefined ? <ErrorMessage error={save.error} id="segment-save-error" /> : null}
      </form>
      <LivePreview preview={preview} updating={updating} />
    </div>
  )
}
