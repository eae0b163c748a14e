/**
 * The first three steps of the campaign flow: audience (a list or a segment, with how many of its
 * contacts may be mailed), content (a template or its own subject, HTML and text), sender (the
 * account's verified domains only).
 */
import { audienceApi, type ListSummary } from "../../../api/bulk-campaigns.ts"
import { domainsApi } from "../../../api/sender.ts"
import { Field } from "../../../components/Field.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { hrefOf, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import type { FlowForm } from "./draft.ts"
import { PagedPicker } from "./PagedPicker.tsx"

export interface StepProps {
  readonly form: FlowForm
  readonly set: (patch: Partial<FlowForm>) => void
}

const Choice = <V extends string>({ legend, name, onValue, options, value }: {
  legend: string
  name: string
  value: V
  onValue: (value: V) => void
  options: ReadonlyArray<readonly [V, string]>
}) => (
  <fieldset class="cp-choice">
    <legend>{legend}</legend>
    {options.map(([option, label]) => (
      <label key={option}>
        <input type="radio" name={name} value={option} checked={value === option} onChange={() => onValue(option)} />
        {label}
      </label>
    ))}
  </fieldset>
)

/** The sendable count of the chosen list or segment: what the send will freeze, give or take changes meanwhile. */
const SendableCount = ({ form }: { form: FlowForm }) => {
  const session = useSignedIn()
  const id = form.audience === "list" ? form.listId : form.segmentId
  const loaded = useLoad(async () => {
    if (id === null) return undefined
    if (form.audience === "list") {
      const list = await audienceApi.list(id)
      return { total: list.contact_count, sendable: list.sendable_count }
    }
    return audienceApi.segmentCount(id)
  }, [form.audience, id, session.active_key_id])
  if (id === null) return null
  return (
    <div class="cp-count" aria-live="polite">
      <LoadStatus loaded={loaded} what="the count" />
      {loaded.data === undefined ? null : (
        <p>
          <strong data-testid="sendable-count">{count(loaded.data.sendable)}</strong> of {count(loaded.data.total)} contacts can be mailed
          (active, not suppressed{form.audience === "list" ? ", confirmed" : ""}).
        </p>
      )}
    </div>
  )
}

export const AudienceStep = ({ form, set }: StepProps) => (
  <div>
    <Field id="campaign-name" label="Campaign name" value={form.name} onValue={(name) => set({ name })} required maxLength={200} />
    <Choice legend="Send to" name="audience-kind" value={form.audience} onValue={(audience) => set({ audience })}
      options={[["list", "A list"], ["segment", "A segment"]]} />
    {form.audience === "list"
      ? (
        <PagedPicker<ListSummary> key="list" legend="Lists" name="audience-list" load={audienceApi.lists} selected={form.listId}
          onSelect={(list) => set({ listId: list.id })}
          detail={(list) => `${count(list.sendable_count)} sendable of ${count(list.contact_count)}`}
          empty={<>This key has no list yet: make one in <a href={hrefOf("lists")} onClick={onLinkClick("lists")}>Lists</a>.</>} />
      )
      : (
        <PagedPicker key="segment" legend="Segments" name="audience-segment" load={audienceApi.segments} selected={form.segmentId}
          onSelect={(segment) => set({ segmentId: segment.id })}
          empty={<>This key has no segment yet: build one in <a href={hrefOf("segments")} onClick={onLinkClick("segments")}>Segments</a>.</>} />
      )}
    <SendableCount form={form} />
  </div>
)

export const ContentStep = ({ form, set }: StepProps) => (
  <div>
    <Choice legend="Content" name="content-kind" value={form.content} onValue={(content) => set({ content })}
      options={[["own", "Write it here"], ["template", "A template"]]} />
    {form.content === "template"
      ? (
        <PagedPicker legend="Templates" name="content-template" load={audienceApi.templates} selected={form.templateId}
          onSelect={(template) => set({ templateId: template.id })}
          detail={(template) => template.subject ?? ""}
          empty={<>This key has no template yet: write one in <a href={hrefOf("templates")} onClick={onLinkClick("templates")}>Templates</a>.</>} />
      )
      : (
        <div>
          <Field id="campaign-subject" label="Subject" value={form.subject} onValue={(subject) => set({ subject })} maxLength={998} />
          <div class="field">
            <label for="campaign-html">HTML</label>
            <textarea id="campaign-html" value={form.html} onInput={(e) => set({ html: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="campaign-text">Text</label>
            <textarea id="campaign-text" value={form.text} onInput={(e) => set({ text: e.currentTarget.value })} />
          </div>
          <p class="cp-hint">Variables such as <code>{"{{ name }}"}</code> and <code>{"{{ unsubscribe_url }}"}</code> are filled per contact.</p>
        </div>
      )}
  </div>
)

export const SenderStep = ({ form, set }: StepProps) => {
  const domains = useLoad(() => domainsApi.list(), [])
  const verified = (domains.data?.items ?? []).filter((d) => d.verified).map((d) => d.domain)
  return (
    <div>
      <LoadStatus loaded={domains} what="the domains" />
      {domains.data === undefined ? null : verified.length === 0
        ? <p class="notice">No verified domain yet: a campaign is sent from a verified domain. Verify one in <a href={hrefOf("domains")} onClick={onLinkClick("domains")}>Domains</a>.</p>
        : (
          <div class="cp-sender">
            <Field id="from-local" label="Sender address, before the @" value={form.fromLocal} onValue={(fromLocal) => set({ fromLocal })} maxLength={64} />
            <div class="field">
              <label for="from-domain">Verified domain</label>
              <select id="from-domain" value={form.fromDomain} onChange={(e) => set({ fromDomain: e.currentTarget.value })}>
                <option value="">Choose a domain</option>
                {verified.map((domain) => <option key={domain} value={domain}>{domain}</option>)}
              </select>
            </div>
            <Field id="from-name" label="Sender name (optional)" value={form.fromName} onValue={(fromName) => set({ fromName })} maxLength={200} />
          </div>
        )}
    </div>
  )
}
