/**
 * The sign-in screen: what a signed-out or expired session sees instead of any view. The API's
 * message for a refused sign-in (wrong email or password, throttled) is shown under the form.
 */
import { useState } from "preact/hooks"
import { ErrorMessage } from "../components/ErrorMessage.tsx"
import { Field } from "../components/Field.tsx"
import { useSession } from "../session.tsx"
import { useSubmit } from "../components/use-submit.ts"

export const SignIn = ({ problem }: { problem?: string | undefined }) => {
  const { signIn } = useSession()
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const { busy, error, onSubmit } = useSubmit(() => signIn(email, password))

  return (
    <main class="sign-in" id="main">
      <h1>Sign in to Herald</h1>
      {problem === undefined ? null : <p class="notice" role="status">{problem}</p>}
      <form onSubmit={onSubmit} aria-describedby={error === undefined ? undefined : "sign-in-error"}>
        <Field id="email" label="Email" type="email" autoComplete="username" required value={email} onValue={setEmail} />
        <Field id="password" label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
        <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
        <ErrorMessage error={error} id="sign-in-error" />
      </form>
    </main>
  )
}
