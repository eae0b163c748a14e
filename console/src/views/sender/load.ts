/**
 * Loading what a view shows: the answer, the API's error, or "loading", re-asked whenever `deps`
 * change. An answer that arrives after a newer request was made is dropped, so fast paging or
 * filtering never shows an older page over a newer one.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"

export type Loaded<T> =
  | { readonly kind: "loading"; readonly previous: T | undefined }
  | { readonly kind: "failed"; readonly error: unknown }
  | { readonly kind: "ready"; readonly value: T }

export const useLoad = <T,>(load: () => Promise<T>, deps: ReadonlyArray<unknown>): { state: Loaded<T>; reload: () => void } => {
  const [state, setState] = useState<Loaded<T>>({ kind: "loading", previous: undefined })
  const generation = useRef(0)
  const [reloads, setReloads] = useState(0)

  useEffect(() => {
    generation.current += 1
    const mine = generation.current
    setState((before) => ({ kind: "loading", previous: before.kind === "ready" ? before.value : before.kind === "loading" ? before.previous : undefined }))
    load().then(
      (value) => {
        if (generation.current === mine) setState({ kind: "ready", value })
      },
      (error: unknown) => {
        if (generation.current === mine) setState({ kind: "failed", error })
      }
    )
    // `load` is rebuilt at each render; `deps` say when it asks for something else.
  }, [...deps, reloads])

  const reload = useCallback(() => setReloads((n) => n + 1), [])
  return { state, reload }
}

/** The value to show: the answer, or while a new one loads, the previous one (no flicker). */
export const shown = <T,>(state: Loaded<T>): T | undefined =>
  state.kind === "ready" ? state.value : state.kind === "loading" ? state.previous : undefined
