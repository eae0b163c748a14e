/**
 * The signed-in state every view reads: who is signed in, the keys they may act as and the active
 * one. Any 401 from any call drops back to the sign-in screen (the session expired, was signed out
 * in another tab, or the account was suspended), so no view is ever left half-working.
 */
import { createContext, type ComponentChildren } from "preact"
import { useCallback, useContext, useEffect, useMemo, useState } from "preact/hooks"
import { ApiError, sessionApi, setCsrfToken, setUnauthorizedHandler } from "./api/client.ts"
import type { Session } from "./api/types.ts"

export type SessionState =
  | { readonly kind: "loading" }
  /** `problem`: why the session could not be read, when it was not a plain 401. */
  | { readonly kind: "signed-out"; readonly problem?: string }
  | { readonly kind: "signed-in"; readonly session: Session }

export interface SessionActions {
  readonly state: SessionState
  readonly signIn: (email: string, password: string) => Promise<void>
  readonly signOut: () => Promise<void>
  readonly switchKey: (keyId: string) => Promise<void>
  readonly reload: () => Promise<void>
}

const SessionContext = createContext<SessionActions | undefined>(undefined)

export const useSession = (): SessionActions => {
  const actions = useContext(SessionContext)
  if (actions === undefined) throw new Error("useSession outside <SessionProvider>")
  return actions
}

/** The signed-in session; only for components rendered inside the shell. */
export const useSignedIn = (): Session => {
  const { state } = useSession()
  if (state.kind !== "signed-in") throw new Error("useSignedIn outside the signed-in shell")
  return state.session
}

const describe = (error: unknown): string =>
  error instanceof ApiError ? error.message : "The session could not be read."

export const SessionProvider = ({ children }: { children: ComponentChildren }) => {
  const [state, setState] = useState<SessionState>({ kind: "loading" })

  const reload = useCallback(async () => {
    try {
      const session = await sessionApi.read()
      setCsrfToken(session.csrf_token)
      setState({ kind: "signed-in", session })
    } catch (error) {
      setCsrfToken(undefined)
      const unauthorized = error instanceof ApiError && error.status === 401
      setState(unauthorized ? { kind: "signed-out" } : { kind: "signed-out", problem: describe(error) })
    }
  }, [])

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setCsrfToken(undefined)
      setState({ kind: "signed-out", problem: "Your session has ended. Sign in again." })
    })
    void reload()
  }, [reload])

  const signIn = useCallback(async (email: string, password: string) => {
    await sessionApi.signIn(email, password)
    await reload()
  }, [reload])

  const signOut = useCallback(async () => {
    try {
      await sessionApi.signOut()
    } finally {
      setCsrfToken(undefined)
      setState({ kind: "signed-out" })
    }
  }, [])

  const switchKey = useCallback(async (keyId: string) => {
    await sessionApi.switchKey(keyId)
    await reload()
  }, [reload])

  const actions = useMemo(() => ({ state, signIn, signOut, switchKey, reload }), [state, signIn, signOut, switchKey, reload])
  return <SessionContext.Provider value={actions}>{children}</SessionContext.Provider>
}
