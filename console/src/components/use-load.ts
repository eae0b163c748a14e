/**
 * Loading what a view shows: the answer, the API's error, or "loading", re-asked whenever `deps`
 * change. An answer that arrives after a newer request was made is dropped, so fast paging or
 * filtering never shows an older page over a newer one. While a new answer loads, `data` keeps the
 * previous one (no flicker); `state` tells the three cases apart where a view needs them.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"

export type LoadState<T> =
  | { readonly kind: "loading"; readonly previous: T | undefined }
  | { readonly kind: "failed"; readonly error: unknown }
  | { readonly kind: "ready"; readonly value: T }

export interface Loaded<T> {
  readonly state: LoadState<T>
  /** The answer, or while a new one loads the previous one. */
  readonly data: T | undefined
  /** The API's refusal of the last request, else undefined. */
  readonly error: unknown
  readonly loading: boolean
  /** Asks again with the same `deps` (after a change the view made). */
  readonly reload: () => void
}

export const useLoad = <T,>(load: () => Promise<T>, deps: ReadonlyArray<unknown>): Loaded<T> => {
  const [state, setState] = useState<LoadState<T>>({ kind: "loading", previous: undefined })
  const generation = useRef(0)
  const [reloads, setReloads] = useState(0)

  useEffect(() => {
    generation.current += 1
    const mine = generation.current
    setState((before) => ({ kind: "loading", previous: shown(before) }))
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
  return {
    state,
    data: shown(state),
    error: state.kind === "failed" ? state.error : undefined,
    loading: state.kind === "loading",
    reload
  }
}

/** The value to show: the answer, or while a new one loads, the previous one (no flicker). */
export const shown = <T,>(state: LoadState<T>): T | undefined =>
  state.kind === "ready" ? state.value : state.kind === "loading" ? state.previous : undefined
