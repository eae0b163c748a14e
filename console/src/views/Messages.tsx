/**
 * Messages (#28 view 2): the audit, one row per recipient delivery, filtered by status, recipient
 * (or subject), key and dates, paged on the server. A row opens its message (`messages/{id}`):
 * the timeline and the content as the recipient got it (sender/MessageDetail.tsx).
 */
import { useState } from "preact/hooks"
import { type AuditEvent, type AuditFilters, messagesApi } from "../api/sender.ts"
import { ApiError } from "../api/client.ts"
import { ErrorMessage } from "../components/ErrorMessage.tsx"
import { Field } from "../components/Field.tsx"
import { hrefOf, onLinkClick } from "../router.ts"
import { useSignedIn } from "../session.tsx"
import type { ViewProps } from "./index.ts"
import { when } from "../components/format.ts"
import { shown, useLoad } from "../components/use-load.ts"
import { MessageDetail } from "./sender/MessageDetail.tsx"
import { PAGE_SIZE, Pager } from "../components/Pager.tsx"
import { ScrollTable } from "../components/ScrollTable.tsx"
import "./sender/sender.css"

interface FilterForm {
  readonly event: "" | AuditEvent
  readonly search: string
  readonly app: string
  /** yyyy-mm-dd from the date inputs, or "". */
  readonly from: string
  readonly to: string
}

const NO_FILTERS: FilterForm = { event: "", search: "", app: "", from: "", to: "" }

/**
 * The list as the person left it (filters and page), kept for this page load: opening a message
 * and coming back to "All messages" returns to the same rows, not to the first page unfiltered.
 */
const remembered: { form: FilterForm; offset: number } = { form: NO_FILTERS, offset: 0 }

/** The form as the audit's query: whole UTC days, both ends inclusive. */
const filtersOf = (form: FilterForm): AuditFilters => ({
  event: form.event === "" ? undefined : form.event,
  search: form.search.trim() === "" ? undefined : form.search.trim(),
  app: form.app === "" ? undefined : form.app,
  from: form.from === "" ? undefined : `${form.from}T00:00:00.000Z`,
  to: form.to === "" ? undefined : `${form.to}T23:59:59.999Z`
})

const STATUS_CLASS: Record<AuditEvent, string> = { sent: "good", failed: "bad", queued: "wait" }

/** The filter an API error names (its `param`), so the message shows under that field. */
type FilterParam = "event" | "search" | "app" | "from" | "to"
const FILTER_PARAMS: ReadonlyArray<string> = ["event", "search", "app", "from", "to"]

export const filterProblem = (error: unknown): { param: FilterParam; message: string } | undefined =>
  error instanceof ApiError && error.param !== undefined && FILTER_PARAMS.includes(error.param)
    ? { param: error.param as FilterParam, message: error.message }
    : undefined

const SelectError = ({ id, message }: { id: string; message: string | undefined }) =>
  message === undefined ? null : <p class="error" id={`${id}-error`}>{message}</p>

const Filters = ({ onApply, problem }: { onApply: (form: FilterForm) => void; problem: ReturnType<typeof filterProblem> }) => {
  const session = useSignedIn()
  const [form, setForm] = useState<FilterForm>(remembered.form)
  const set = (patch: Partial<FilterForm>) => setForm({ ...form, ...patch })
  const about = (param: FilterParam) => (problem?.param === param ? problem.message : undefined)
  return (
    <form
      class="filters"
      aria-label="Filter messages"
      onSubmit={(event) => {
        event.preventDefault()
        onApply(form)
      }}
    >
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={form.event} aria-describedby={about("event") === undefined ? undefined : "filter-status-error"}
          onChange={(e) => set({ event: e.currentTarget.value as FilterForm["event"] })}>
          <option value="">Any</option>
          <option value="queued">Queued</option>
          <option value="sent">Sent</option>
          <option value="failed">Failed</option>
        </select>
        <SelectError id="filter-status" message={about("event")} />
      </div>
      <Field id="filter-search" label="Recipient or subject" type="search" maxLength={256} value={form.search} onValue={(search) => set({ search })} error={about("search")} />
      <div class="field">
        <label for="filter-key">Key</label>
        <select id="filter-key" value={form.app} aria-describedby={about("app") === undefined ? undefined : "filter-key-error"}
          onChange={(e) => set({ app: e.currentTarget.value })}>
          <option value="">Any key</option>
          {session.keys.map((key) => <option key={key.id} value={key.id}>{key.label}</option>)}
        </select>
        <SelectError id="filter-key" message={about("app")} />
      </div>
      <Field id="filter-from" label="From (UTC day)" type="date" value={form.from} onValue={(from) => set({ from })} error={about("from")} />
      <Field id="filter-to" label="To (UTC day)" type="date" value={form.to} onValue={(to) => set({ to })} error={about("to")} />
      <div class="actions">
        <button type="submit">Apply</button>
        <button type="button" class="secondary" onClick={() => { setForm(NO_FILTERS); onApply(NO_FILTERS) }}>Clear</button>
      </div>
    </form>
  )
}

const AuditList = () => {
  const session = useSignedIn()
  // Another account signed in in this tab: the remembered key filter is not one of its keys.
  if (remembered.form.app !== "" && !session.keys.some((key) => key.id === remembered.form.app)) {
    remembered.form = NO_FILTERS
    remembered.offset = 0
  }
  const [filters, setFilters] = useState<AuditFilters>(() => filtersOf(remembered.form))
  const [offset, setOffsetState] = useState(remembered.offset)
  const setOffset = (next: number) => {
    remembered.offset = next
    setOffsetState(next)
  }
  const { state } = useLoad(() => messagesApi.audit(filters, PAGE_SIZE, offset), [filters, offset, session.active_key_id])
  const page = shown(state)
  const problem = state.kind === "failed" ? filterProblem(state.error) : undefined
  const keyLabel = (id: string) => session.keys.find((key) => key.id === id)?.label ?? id

  return (
    <>
      <Filters onApply={(form) => { remembered.form = form; setFilters(filtersOf(form)); setOffset(0) }} problem={problem} />
      {state.kind === "failed" && problem === undefined ? <ErrorMessage error={state.error} id="messages-error" /> : null}
      {page === undefined
        ? (state.kind === "loading" ? <p role="status">Loading messages…</p> : null)
        : (
          <>
            <ScrollTable label="Messages">
              <table aria-busy={state.kind === "loading"}>
                <thead>
                  <tr>
                    <th scope="col">Accepted</th>
                    <th scope="col">Recipient</th>
                    <th scope="col">Subject</th>
                    <th scope="col">Status</th>
                    <th scope="col">Key</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((item) => (
                    <tr key={item.id}>
                      <td>{when(item.ts)}</td>
                      <td class="wrap">
                        <a href={hrefOf(`messages/${item.message_id}`)} onClick={onLinkClick(`messages/${item.message_id}`)}>
                          {item.recipient}
                        </a>
                      </td>
                      <td class="wrap">{item.subject}</td>
                      <td>
                        <span class={`status-badge ${STATUS_CLASS[item.event]}`}>{item.event}</span>
                        {item.smtp_reply === null ? null : <div class="wrap">{item.smtp_reply}</div>}
                      </td>
                      <td>{keyLabel(item.app)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollTable>
            {page.items.length === 0 ? <p>No message matches these filters.</p> : null}
            <Pager label="Messages pages" total={page.total} offset={page.offset} limit={page.limit} onOffset={setOffset} busy={state.kind === "loading"} />
          </>
        )}
    </>
  )
}

export const MessagesView = ({ rest }: ViewProps) =>
  rest[0] === undefined ? <AuditList /> : <MessageDetail id={rest[0]} />
