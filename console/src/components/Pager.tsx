/**
 * Server-side paging for every list of the console (lists of 100,000 rows stay fast): the API is
 * asked for one page (limit and offset); this shows where the page is and moves by one page. A
 * list that fits one page shows its count only.
 */
import { count } from "./format.ts"

/** Rows per page of the console's lists. */
export const PAGE_SIZE = 50

export interface PagerProps {
  /** Names the list for screen readers ("Messages pages"). */
  readonly label: string
  readonly total: number
  readonly offset: number
  readonly limit: number
  readonly onOffset: (offset: number) => void
  readonly busy?: boolean
}

export const Pager = ({ busy = false, label, limit, offset, onOffset, total }: PagerProps) => {
  if (total <= limit && offset === 0) return <p class="pager-count">{total === 1 ? "1 item" : `${count(total)} items`}</p>
  const first = total === 0 ? 0 : offset + 1
  const last = Math.min(offset + limit, total)
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={busy || offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span role="status">{total === 0 ? "No rows" : `${count(first)}–${count(last)} of ${count(total)}`}</span>
      <button type="button" disabled={busy || offset + limit >= total} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  )
}
