/** What a loaded section shows before its data: a status while loading, the API's message on error. */
import type { Loaded } from "./use-load.ts"
import { ErrorMessage } from "./ErrorMessage.tsx"

export const LoadStatus = ({ loaded, what }: { loaded: Loaded<unknown>; what: string }) =>
  loaded.error !== undefined
    ? <ErrorMessage error={loaded.error} />
    : loaded.loading && loaded.data === undefined
      ? <p role="status">Loading {what}…</p>
      : null
