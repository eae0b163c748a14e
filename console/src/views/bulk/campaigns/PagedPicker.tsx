/**
 * Choosing one item of a list the API pages (lists, segments, templates of the key): radio buttons
 * over one page at a time (never the whole list), with the pager below. The chosen item may sit on
 * another page; its name is kept by the caller.
 */
import { useState } from "preact/hooks"
import type { ComponentChildren } from "preact"
import type { Page } from "../../../api/bulk-campaigns.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { Pager } from "../../../components/Pager.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSignedIn } from "../../../session.tsx"

/** Options per page: a picker is a short list inside a form. */
const PICKER_PAGE = 10

export interface PagedPickerProps<T extends { id: string; name: string }> {
  readonly legend: string
  /** The radio group's name (unique in the page). */
  readonly name: string
  readonly load: (limit: number, offset: number) => Promise<Page<T>>
  readonly selected: string | null
  readonly onSelect: (item: T) => void
  /** Beside each option's name (counts, subject). */
  readonly detail?: (item: T) => ComponentChildren
  /** What to say when the key has none (and where to make one). */
  readonly empty: ComponentChildren
}

export const PagedPicker = <T extends { id: string; name: string }>(props: PagedPickerProps<T>) => {
  const session = useSignedIn()
  const [offset, setOffset] = useState(0)
  const page = useLoad(() => props.load(PICKER_PAGE, offset), [offset, session.active_key_id])
  return (
    <fieldset class="cp-picker">
      <legend>{props.legend}</legend>
      <LoadStatus loaded={page} what={props.legend.toLowerCase()} />
      {page.data === undefined ? null : page.data.total === 0 ? <p>{props.empty}</p> : (
        <>
          <ul>
            {page.data.items.map((item) => (
              <li key={item.id}>
                <label>
                  <input type="radio" name={props.name} value={item.id} checked={props.selected === item.id} onChange={() => props.onSelect(item)} />
                  <span class="cp-name">{item.name}</span>
                  {props.detail === undefined ? null : <span class="cp-detail">{props.detail(item)}</span>}
                </label>
              </li>
            ))}
          </ul>
          <Pager label={`${props.legend} pages`} total={page.data.total} offset={offset} limit={PICKER_PAGE} onOffset={setOffset} busy={page.loading} />
        </>
      )}
    </fieldset>
  )
}
