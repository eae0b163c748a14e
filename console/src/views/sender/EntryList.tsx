/**
 * A searchable, paged list of addresses or domains with add and remove: the account's suppression
 * list, and for admins the platform list and the blocked recipient domains. Paged on the server;
 * the API's message shows next to the form or the row that caused it.
 */
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import type { EntryListApi } from "../../api/sender.ts"
import { ErrorMessage, messageOf } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { shown, useLoad } from "../../components/use-load.ts"
import { PAGE_SIZE, Pager } from "../../components/Pager.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { useSubmit } from "../../components/use-submit.ts"

export interface Column<T> {
  readonly title: string
  readonly cell: (row: T) => ComponentChildren
}

export interface EntryListProps<T> {
  /** Unique among the lists of a page: the ids of its controls start with it. */
  readonly id: string
  /** "Suppressions", "Blocked domains": names the table, the search and the pages. */
  readonly title: string
  /** "address", "domain": what one entry is. */
  readonly noun: string
  readonly api: EntryListApi<T>
  readonly keyOf: (row: T) => string
  readonly columns: ReadonlyArray<Column<T>>
}

const AddEntry = ({ id, noun, onAdd, title }: { id: string; noun: string; title: string; onAdd: (entry: string) => Promise<unknown> }) => {
  const [value, setValue] = useState("")
  const { busy, error, onSubmit } = useSubmit(async () => {
    await onAdd(value.trim())
    setValue("")
  })
  return (
    <form class="inline-form" aria-label={`Add to ${title.toLowerCase()}`} onSubmit={onSubmit}>
      <Field id={`${id}-add`} label={`Add ${noun}`} required maxLength={320} value={value} onValue={setValue} error={error === undefined ? undefined : messageOf(error)} />
      <button type="submit" disabled={busy}>Add</button>
    </form>
  )
}

export const EntryList = <T,>({ api, columns, id, keyOf, noun, title }: EntryListProps<T>) => {
  const [typed, setTyped] = useState("")
  const [search, setSearch] = useState("")
  const [offset, setOffset] = useState(0)
  const [done, setDone] = useState("")
  const [rowError, setRowError] = useState<{ entry: string; error: unknown } | undefined>(undefined)
  const { reload, state } = useLoad(() => api.list(search === "" ? undefined : search, PAGE_SIZE, offset), [search, offset])
  const page = shown(state)

  const remove = async (entry: string) => {
    setRowError(undefined)
    try {
      await api.remove(entry)
      setDone(`Removed ${entry}.`)
      reload()
    } catch (error) {
      setRowError({ entry, error })
    }
  }

  return (
    <div class="entry-list">
      <AddEntry id={id} noun={noun} title={title} onAdd={async (entry) => { await api.add(entry); setDone(`Added ${entry}.`); reload() }} />
      <form class="inline-form" role="search" aria-label={`${title}: search`} onSubmit={(e) => { e.preventDefault(); setSearch(typed.trim()); setOffset(0) }}>
        <Field id={`${id}-search`} label={`Search ${title.toLowerCase()}`} type="search" maxLength={256} value={typed} onValue={setTyped} />
        <button type="submit" class="secondary">Search</button>
      </form>
      <p role="status" class="done">{done}</p>
      {state.kind === "failed" ? <ErrorMessage error={state.error} /> : null}
      {page === undefined ? (state.kind === "loading" ? <p role="status">Loading…</p> : null) : page.total === 0
        ? <p>{search === "" ? "The list is empty." : `Nothing matches “${search}”.`}</p>
        : (
          <>
            <ScrollTable label={title}>
              <table aria-busy={state.kind === "loading"}>
                <thead>
                  <tr>
                    {columns.map((c) => <th key={c.title} scope="col">{c.title}</th>)}
                    <th scope="col"><span class="sr-only">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((row) => {
                    const entry = keyOf(row)
                    return (
                      <tr key={entry}>
                        {columns.map((c) => <td key={c.title} class="wrap">{c.cell(row)}</td>)}
                        <td>
                          <button type="button" class="danger" aria-label={`Remove ${entry}`} onClick={() => void remove(entry)}>Remove</button>
                          {rowError?.entry === entry ? <ErrorMessage error={rowError.error} /> : null}
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </ScrollTable>
            <Pager label={`${title} pages`} total={page.total} offset={page.offset} limit={page.limit} onOffset={setOffset} busy={state.kind === "loading"} />
          </>
        )}
    </div>
  )
}
