/**
 * The active key's contacts (#29 view 1): search (part of the address or name), a tag and a
 * status filter, paged on the server (a key with 100,000 contacts loads one page of 50). A row
 * opens the contact's page; "Add a contact" and "Import contacts" lead to their forms.
 */
import { useState } from "preact/hooks"
import { CONTACT_STATUSES, type ContactFilters, type ContactStatus, contactsApi } from "../../../api/bulk-contacts.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { when } from "../../../components/format.ts"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { shown, useLoad } from "../../../components/use-load.ts"
import { hrefOf, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { ApiError } from "../../../api/client.ts"

interface FilterForm {
  readonly search: string
  readonly tag: string
  readonly status: "" | ContactStatus
}

const NO_FILTERS: FilterForm = { search: "", tag: "", status: "" }

/** Filters and page as the person left them, for this page load (back from a contact returns there). */
const remembered: { form: FilterForm; offset: number; key: string } = { form: NO_FILTERS, offset: 0, key: "" }

const filtersOf = (form: FilterForm): ContactFilters => ({
  search: form.search.trim() === "" ? undefined : form.search.trim(),
  tag: form.tag.trim() === "" ? undefined : form.tag.trim(),
  status: form.status === "" ? undefined : form.status
})

/** The filter an API refusal names (its `param`), so its message shows under that field. */
const filterProblem = (error: unknown): { param: string; message: string } | undefined =>
  error instanceof ApiError && (error.param === "search" || error.param === "tag" || error.param === "status")
    ? { param: error.param, message: error.message }
    : undefined

export const STATUS_CLASS: Record<ContactStatus, string> = { active: "good", unsubscribed: "wait", bounced: "bad", complained: "bad" }

const Filters = ({ onApply, problem }: { onApply: (form: FilterForm) => void; problem: ReturnType<typeof filterProblem> }) => {
  const [form, setForm] = useState<FilterForm>(remembered.form)
  const set = (patch: Partial<FilterForm>) => setForm({ ...form, ...patch })
  const about = (param: string) => (problem?.param === param ? problem.message : undefined)
  return (
    <form class="filters" role="search" aria-label="Filter contacts" onSubmit={(event) => { event.preventDefault(); onApply(form) }}>
      <Field id="contacts-search" label="Email or name" type="search" maxLength={256} value={form.search} onValue={(search) => set({ search })} error={about("search")} />
      <Field id="contacts-tag" label="Tag" maxLength={64} value={form.tag} onValue={(tag) => set({ tag })} error={about("tag")} />
      <div class="field">
        <label for="contacts-status">Status</label>
        <select id="contacts-status" value={form.status} onChange={(e) => set({ status: e.currentTarget.value as FilterForm["status"] })}>
          <option value="">Any</option>
          {CONTACT_STATUSES.map((status) => <option key={status} value={status}>{status}</option>)}
        </select>
      </div>
      <div class="actions">
        <button type="submit">Apply</button>
        <button type="button" class="secondary" onClick={() => { setForm(NO_FILTERS); onApply(NO_FILTERS) }}>Clear</button>
      </div>
    </form>
  )
}

export const ContactList = () => {
  const session = useSignedIn()
  // Another key's contacts are another list: its filters and page start afresh.
  if (remembered.key !== session.active_key_id) Object.assign(remembered, { form: NO_FILTERS, offset: 0, key: session.active_key_id })
  const [filters, setFilters] = useState<ContactFilters>(() => filtersOf(remembered.form))
  const [offset, setOffsetState] = useState(remembered.offset)
  const setOffset = (next: number) => {
    remembered.offset = next
    setOffsetState(next)
  }
  const { state } = useLoad(() => contactsApi.list(filters, PAGE_SIZE, offset), [filters, offset, session.active_key_id])
  const page = shown(state)
  const problem = state.kind === "failed" ? filterProblem(state.error) : undefined
  const filtered = filters.search !== undefined || filters.tag !== undefined || filters.status !== undefined

  return (
    <>
      <p class="contact-actions">
        <a class="button-link" href={hrefOf("contacts/new")} onClick={onLinkClick("contacts/new")}>Add a contact</a>
        <a class="button-link" href={hrefOf("contacts/import")} onClick={onLinkClick("contacts/import")}>Import contacts</a>
      </p>
      <Filters
        problem={problem}
        onApply={(form) => { remembered.form = form; setFilters(filtersOf(form)); setOffset(0) }}
      />
      {state.kind === "failed" && problem === undefined ? <ErrorMessage error={state.error} /> : null}
      {page === undefined
        ? (state.kind === "loading" ? <p role="status">Loading contacts…</p> : null)
        : (
          <>
            <ScrollTable label="Contacts">
              <table aria-busy={state.kind === "loading"}>
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col">Tags</th>
                    <th scope="col" class="num">Lists</th>
                    <th scope="col">Added</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((contact) => (
                    <tr key={contact.id}>
                      <td class="wrap">
                        <a href={hrefOf(`contacts/${contact.id}`)} onClick={onLinkClick(`contacts/${contact.id}`)}>{contact.email}</a>
                      </td>
                      <td class="wrap">{contact.name ?? ""}</td>
                      <td><span class={`status-badge ${STATUS_CLASS[contact.status]}`}>{contact.status}</span></td>
                      <td class="wrap">{contact.tags.join(", ")}</td>
                      <td class="num">{contact.lists.length}</td>
                      <td>{when(contact.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollTable>
            {page.items.length === 0 ? <p>{filtered ? "No contact matches these filters." : "This key has no contacts yet: add one or import a CSV."}</p> : null}
            <Pager label="Contacts pages" total={page.total} offset={page.offset} limit={page.limit} onOffset={setOffset} busy={state.kind === "loading"} />
          </>
        )}
    </>
  )
}
