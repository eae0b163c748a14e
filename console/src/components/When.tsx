/** A time from the API in the reader's locale (the ISO text stays in the title); a dash when there is none. */
import { when } from "./format.ts"

export const When = ({ iso }: { iso: string | null | undefined }) =>
  iso === null || iso === undefined ? <span>—</span> : <time dateTime={iso} title={iso}>{when(iso)}</time>
