import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { ErrorMessage } from "./ErrorMessage.tsx"

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
