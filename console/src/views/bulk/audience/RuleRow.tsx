/**
 * One rule of the segment builder (#29 view 3): a field, a condition and the value that field
 * takes, exactly the contract's (src/bulk/segments/rules.ts): tag has / not_has; status is /
 * is_not one of the four statuses; engagement opened / not_opened / clicked / not_clicked within
 * 1–90 days; created before / after a day; list in / not_in a list of the key; a custom field is /
 * is_not / contains a value, exists / not_exists. The API's message about this rule shows under it.
 */
import type { ContactStatus, MailingList, Rule, RuleField } from "../../../api/bulk-audience.ts"
import { CONTACT_STATUSES } from "../../../api/bulk-audience.ts"

/** A rule as the form holds it: every value as the text its control shows. */
export interface RuleDraft {
  readonly field: RuleField
  readonly op: string
  readonly value: string
  readonly days: string
  readonly fieldName: string
}

export const FIELDS: ReadonlyArray<readonly [RuleField, string]> = [
  ["tag", "Tag"],
  ["status", "Status"],
  ["engagement", "Engagement"],
  ["created", "Created"],
  ["list", "List"],
  ["custom", "Custom field"]
]

export const OPS: Record<RuleField, ReadonlyArray<readonly [string, string]>> = {
  tag: [["has", "has the tag"], ["not_has", "does not have the tag"]],
  status: [["is", "is"], ["is_not", "is not"]],
  engagement: [["opened", "opened a campaign"], ["not_opened", "did not open a campaign"], ["clicked", "clicked in a campaign"], ["not_clicked", "did not click in a campaign"]],
  created: [["before", "before"], ["after", "after"]],
  list: [["in", "is a member of"], ["not_in", "is not a member of"]],
  custom: [["is", "is"], ["is_not", "is not"], ["contains", "contains"], ["exists", "is set"], ["not_exists", "is not set"]]
}

/** The engagement window a new rule starts with (the API takes 1–90 days). */
const DEFAULT_DAYS = "30"

export const newDraft = (field: RuleField = "tag", firstListId = ""): RuleDraft => ({
  field,
  op: OPS[field][0]![0],
  value: field === "status" ? "active" : field === "list" ? firstListId : "",
  days: DEFAULT_DAYS,
  fieldName: ""
})

/** Custom-field conditions that compare with a value (exists / not_exists take none). */
const COMPARES = ["is", "is_not", "contains"]

/**
 * Whether every value the rule needs is filled in: the live preview counts complete rules only (a
 * half-typed rule is not an error yet); saving sends every rule, and the API names what is missing.
 */
export const isComplete = (draft: RuleDraft): boolean => {
  switch (draft.field) {
    case "status":
      return true
    case "engagement":
      return draft.days.trim() !== ""
    case "custom":
      return draft.fieldName.trim() !== "" && (!COMPARES.includes(draft.op) || draft.value !== "")
    default:
      return draft.value.trim() !== ""
  }
}

/** The draft as the API's rule; a wrong value is the API's to refuse, with its message under the rule. */
export const ruleOf = (draft: RuleDraft): Rule => {
  const op = draft.op as never
  switch (draft.field) {
    case "engagement":
      return { field: "engagement", op, days: draft.days.trim() === "" ? 0 : Number(draft.days) }
    case "custom":
      return COMPARES.includes(draft.op)
        ? { field: "custom", op, field_name: draft.fieldName, value: draft.value }
        : { field: "custom", op, field_name: draft.fieldName }
    case "status":
      return { field: "status", op, value: draft.value as ContactStatus }
    default:
      return { field: draft.field, op, value: draft.value }
  }
}

export const draftOf = (rule: Rule): RuleDraft => ({
  ...newDraft(rule.field),
  op: rule.op,
  ...(rule.field === "engagement" ? { days: String(rule.days) } : {}),
  ...(rule.field === "custom" ? { fieldName: rule.field_name, value: rule.value ?? "" } : "value" in rule ? { value: rule.value } : {})
})

const ValueControl = ({ draft, id, lists, onChange }: {
  draft: RuleDraft
  id: string
  lists: ReadonlyArray<MailingList>
  onChange: (patch: Partial<RuleDraft>) => void
}) => {
  switch (draft.field) {
    case "status":
      return (
        <select id={id} value={draft.value} onChange={(e) => onChange({ value: e.currentTarget.value })}>
          {CONTACT_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      )
    case "engagement":
      return <input id={id} type="number" min={1} max={90} value={draft.days} onInput={(e) => onChange({ days: e.currentTarget.value })} />
    case "created":
      return <input id={id} type="date" value={draft.value} onInput={(e) => onChange({ value: e.currentTarget.value })} />
    case "list":
      return (
        <select id={id} value={draft.value} onChange={(e) => onChange({ value: e.currentTarget.value })}>
          <option value="">Choose a list</option>
          {lists.map((list) => <option key={list.id} value={list.id}>{list.name}</option>)}
        </select>
      )
    default:
      return <input id={id} type="text" maxLength={500} value={draft.value} onInput={(e) => onChange({ value: e.currentTarget.value })} />
  }
}

const VALUE_LABEL: Record<RuleField, string> = {
  tag: "Tag", status: "Status", engagement: "Within the last (days)", created: "Day", list: "List", custom: "Value"
}

export const RuleRow = ({ draft, error, index, lists, onChange, onRemove }: {
  draft: RuleDraft
  index: number
  error: string | undefined
  lists: ReadonlyArray<MailingList>
  onChange: (next: RuleDraft) => void
  onRemove: () => void
}) => {
  const id = `rule-${index}`
  const set = (patch: Partial<RuleDraft>) => onChange({ ...draft, ...patch })
  const takesValue = draft.field !== "custom" || COMPARES.includes(draft.op)
  return (
    <fieldset class="rule" aria-describedby={error === undefined ? undefined : `${id}-error`}>
      <legend>Rule {index + 1}</legend>
      <div class="field">
        <label for={`${id}-field`}>Field</label>
        <select id={`${id}-field`} value={draft.field}
          onChange={(e) => onChange(newDraft(e.currentTarget.value as RuleField, lists[0]?.id ?? ""))}>
          {FIELDS.map(([field, label]) => <option key={field} value={field}>{label}</option>)}
        </select>
      </div>
      {draft.field === "custom"
        ? (
          <div class="field">
            <label for={`${id}-name`}>Field name</label>
            <input id={`${id}-name`} type="text" maxLength={500} value={draft.fieldName} onInput={(e) => set({ fieldName: e.currentTarget.value })} />
          </div>
        )
        : null}
      <div class="field">
        <label for={`${id}-op`}>Condition</label>
        <select id={`${id}-op`} value={draft.op} onChange={(e) => set({ op: e.currentTarget.value })}>
          {OPS[draft.field].map(([op, label]) => <option key={op} value={op}>{label}</option>)}
        </select>
      </div>
      {takesValue
        ? (
          <div class="field">
            <label for={`${id}-value`}>{VALUE_LABEL[draft.field]}</label>
            <ValueControl draft={draft} id={`${id}-value`} lists={lists} onChange={set} />
          </div>
        )
        : null}
      <button type="button" class="secondary" onClick={onRemove}>Remove rule {index + 1}</button>
      {isComplete(draft) ? null : <p class="hint rule-error">Not counted until it is complete.</p>}
      {error === undefined ? null : <p class="error rule-error" id={`${id}-error`}>{error}</p>}
    </fieldset>
  )
}
