/** The whole console: the sign-in screen or the shell, never a page in between. */
import { Shell } from "./components/Shell.tsx"
import { SessionProvider, useSession } from "./session.tsx"
import { SignIn } from "./views/SignIn.tsx"

const Gate = () => {
  const { state } = useSession()
  switch (state.kind) {
    case "loading":
      return <p class="loading" role="status">Loading…</p>
    case "signed-out":
      return <SignIn problem={state.problem} />
    case "signed-in":
      return <Shell />
  }
}

export const App = () => (
  <SessionProvider>
    <Gate />
  </SessionProvider>
)
