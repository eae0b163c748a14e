/**
 * A value that follows `value` only once it has stopped changing for `ms`: a live preview keyed on
 * it (useLoad's deps) asks the API once per pause in typing, not once per keystroke.
 */
import { useEffect, useState } from "preact/hooks"

/** The pause a live preview waits for (#29: "debounced"). */
export const PREVIEW_DEBOUNCE_MS = 400

export const useDebounced = <T,>(value: T, ms: number = PREVIEW_DEBOUNCE_MS): T => {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}
