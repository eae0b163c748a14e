/**
 * Small pieces the operator's views (keys and webhooks, usage and plan, admin) share: loading an
 * API answer with its error, a pager over server-side pages, a table that scrolls inside itself
 * (never the page) at 390 px, a copy button, and a button whose API error shows beside it.
 */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"

export interface Loaded<T> {
  readonly data: T | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => void
}

/** Calls `load` when `deps` change (and on reload); the last answer wins, an older one is dropped. */
export const useLoad = <T,>(load: () => Promise<T>, deps: ReadonlyArray<unknown>): Loaded<T> => {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setLoading(true)
    load().then(
      (answer) => {
        if (!current) return
        setData(answer)
        setError(undefined)
        setLoading(false)
      },
      (failure: unknown) => {
        if (!current) return
        setError(failure)
        setLoading(false)
      }
    )
    return () => {
      current = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  return { data, error, loading, reload }
}

/** What a loaded section shows before its data: a status while loading, the API's message on error. */
export const LoadState = ({ loaded, what }: { loaded: Loaded<unknown>; what: string }) =>
  loaded.error !== undefined
    ? <ErrorMessage error={loaded.error} />
    : loaded.loading && loaded.data === undefined
      ? <p role="status">Loading {what}…</p>
      : null

/** A table in a region that scrolls sideways by itself (keyboard-focusable), so the page never does. */
export const TableRegion = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <div class="op-table" role="region" aria-label={label} tabIndex={0}>
    <table>{children}</table>
  </div>
)

export interface PagerProps {
  readonly label: string
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly onOffset: (offset: number) => void
}

/** Previous / next over a server-side list (the API pages; the console never loads a whole list). */
export const Pager = ({ label, limit, offset, onOffset, total }: PagerProps) => {
  if (total <= limit && offset === 0) return <p class="op-count">{total === 1 ? "1 item" : `${total} items`}</p>
  const last = Math.min(offset + limit, total)
  return (
    <nav class="op-pager" aria-label={`${label} pages`}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>Previous</button>
      <span>{total === 0 ? "none" : `${offset + 1}–${last} of ${total}`}</span>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>Next</button>
    </nav>
  )
}

/** Copies `text`; says so (announced) or, where the clipboard is refused, asks to copy by hand. */
export const CopyButton = ({ text, label }: { text: string; label: string }) => {
  const [said, setSaid] = useState("")
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setSaid("Copied.")
    } catch {
      setSaid("The browser refused the clipboard: select the text and copy it.")
    }
  }
  return (
    <span class="op-copy">
      <button type="button" onClick={() => void copy()}>{label}</button>
      <span role="status">{said}</span>
    </span>
  )
}

/**
 * A button that calls the API; while it runs it is disabled, and a refusal shows the API's message
 * right beside it. `onDone` gets the answer. With `confirm`, the first press asks (in the page, not
 * a browser dialog) and a second, explicit button does it.
 */
export const ActionButton = <T,>({ children, confirm, onDone, run, danger }: {
  children: ComponentChildren
  run: () => Promise<T>
  onDone?: (answer: T) => void
  confirm?: string
  danger?: boolean
}) => {
  const [busy, setBusy] = useState(false)
  const [asking, setAsking] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const act = async () => {
    setAsking(false)
    setBusy(true)
    setError(undefined)
    try {
      const answer = await run()
      onDone?.(answer)
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const kind = danger === true ? "danger" : undefined
  return (
    <span class="op-action">
      {asking && confirm !== undefined
        ? (
          <span class="op-confirm" role="group" aria-label={confirm}>
            <span>{confirm}</span>
            <button type="button" class={kind} onClick={() => void act()}>Yes, {children}</button>
            <button type="button" class="secondary" onClick={() => setAsking(false)}>Cancel</button>
          </span>
        )
        : (
          <button type="button" class={kind} disabled={busy} onClick={() => (confirm === undefined ? void act() : setAsking(true))}>
            {children}
          </button>
        )}
      <ErrorMessage error={error} />
    </span>
  )
}

/** A time from the API in the reader's locale (the ISO text stays in the title). */
export const When = ({ iso }: { iso: string | null | undefined }) =>
  iso === null || iso === undefined ? <span>—</span> : <time dateTime={iso} title={iso}>{new Date(iso).toLocaleString()}</time>

export const formatCount = (n: number): string => n.toLocaleString("en")

export const formatCents = (cents: number): string => `$${(cents / 100).toFixed(2)}`
