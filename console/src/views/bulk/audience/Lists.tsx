/**
 * Lists (#29 view 2): the active key's lists, paged on the server, created here and deleted as the
 * API allows — several at once through POST /v1/bulk/lists/delete, whose report says which were
 * not deleted and why (in use by a segment or a campaign, another key's, gone). A list opens its
 * page (`lists/{id}`): its settings, double opt-in and members (ListPage.tsx).
 */
import { useState } from "preact/hooks"
import { type ListDeleteReport, listsApi } from "../../../api/bulk-audience.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { When } from "../../../components/When.tsx"
import { hrefOf, navigate, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import type { ViewProps } from "../../index.ts"
import { ListPage } from "./ListPage.tsx"
import "../../sender/sender.css"
import "./audience.css"

const CreateList = () => {
  const [name, setName] = useState("")
  const { busy, error, onSubmit } = useSubmit(async () => {
    const list = await listsApi.create(name)
    navigate(`lists/${encodeURIComponent(list.id)}`)
  })
  return (
    <form class="inline-form" aria-label="Create a list" onSubmit={onSubmit}>
      <Field id="new-list-name" label="New list name" value={name} onValue={setName} required maxLength={200} />
      <button type="submit" disabled={busy}>Create list</button>
      <ErrorMessage error={error} id="new-list-error" />
    </form>
  )
}

/** The delete report in words: what went, and why each other list stayed. */
export const DeleteReportText = ({ report, names }: { report: ListDeleteReport; names: (id: string) => string }) => {
  const named = (ids: ReadonlyArray<string>) => ids.map(names).join(", ")
  return (
    <div role="status" class="delete-report">
      <p>Deleted {count(report.deleted)} of {count(report.requested)}.</p>
      {report.in_use.length === 0 ? null : (
        <p>In use, not deleted: {named(report.in_use)}. A saved segment or a campaign uses each of them; remove the list from those first.</p>
      )}
      {report.forbidden.length === 0 ? null : (
        <p>Not deleted: {named(report.forbidden)} belong to another key of this account. Switch to that key to delete them.</p>
      )}
      {report.not_found.length === 0 ? null : <p>Already gone: {named(report.not_found)}.</p>}
    </div>
  )
}

const ListIndex = () => {
  const session = useSignedIn()
  const [offset, setOffset] = useState(0)
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [report, setReport] = useState<ListDeleteReport | undefined>(undefined)
  const lists = useLoad(() => listsApi.page(PAGE_SIZE, offset), [offset, session.active_key_id])
  const page = lists.data
  const nameOf = (id: string) => page?.items.find((list) => list.id === id)?.name ?? id
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected)
    if (on) next.add(id)
    else next.delete(id)
    setSelected(next)
  }
  return (
    <>
      <CreateList />
      <LoadStatus loaded={lists} what="lists" />
      {page === undefined ? null : (
        <section aria-labelledby="lists-heading">
          <h2 id="lists-heading" class="sr-only">Lists of this key</h2>
          {page.items.length === 0 && page.total === 0 ? <p>This key has no lists yet.</p> : (
            <ScrollTable label="Lists">
              <table aria-busy={lists.loading}>
                <thead>
                  <tr>
                    <th scope="col"><span class="sr-only">Select</span></th>
                    <th scope="col">Name</th>
                    <th scope="col" class="num">Members</th>
                    <th scope="col" class="num">Sendable</th>
                    <th scope="col" class="num">Pending</th>
                    <th scope="col">Double opt-in</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((list) => (
                    <tr key={list.id}>
                      <td>
                        <input type="checkbox" aria-label={`Select ${list.name}`} checked={selected.has(list.id)}
                          onChange={(e) => toggle(list.id, e.currentTarget.checked)} />
                      </td>
                      <td class="wrap">
                        <a href={hrefOf(`lists/${encodeURIComponent(list.id)}`)} onClick={onLinkClick(`lists/${encodeURIComponent(list.id)}`)}>{list.name}</a>
                      </td>
                      <td class="num">{count(list.contact_count)}</td>
                      <td class="num">{count(list.sendable_count)}</td>
                      <td class="num">{count(list.pending_count)}</td>
                      <td>{list.require_confirmation === 1 ? "Required" : "Off"}</td>
                      <td><When iso={list.created_at} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollTable>
          )}
          <Pager label="Lists pages" total={page.total} offset={page.offset} limit={page.limit} onOffset={setOffset} busy={lists.loading} />
          {selected.size === 0 ? null : (
            <ActionButton danger confirm={`Delete ${selected.size === 1 ? "the selected list" : `${selected.size} lists`} and their memberships?`}
              run={() => listsApi.removeMany([...selected])}
              onDone={(answer) => { setReport(answer); setSelected(new Set()); lists.reload() }}>
              Delete selected
            </ActionButton>
          )}
          {report === undefined ? null : <DeleteReportText report={report} names={nameOf} />}
        </section>
      )}
    </>
  )
}

export const ListsView = ({ rest }: ViewProps) =>
  rest[0] === undefined ? <ListIndex /> : <ListPage id={decodeURIComponent(rest[0])} />
