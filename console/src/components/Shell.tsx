/**
 * The signed-in frame around every view: the navigation (a list of links, so the keyboard and
 * screen readers get it for free), the key switcher, sign-out, and the view's heading naming the
 * active key. At narrow widths the navigation wraps above the content (styles.css).
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { hrefOf, onLinkClick, usePath } from "../router.ts"
import { useSession, useSignedIn } from "../session.tsx"
import { VIEWS, viewFor } from "../views/index.ts"
import { ErrorMessage } from "./ErrorMessage.tsx"
import { activeKeyLabel, KeySwitcher } from "./KeySwitcher.tsx"

const Navigation = ({ current, isAdmin }: { current: string | undefined; isAdmin: boolean }) => (
  <nav aria-label="Console">
    <ul>
      {VIEWS.filter((view) => isAdmin || !view.adminOnly).map((view) => (
        <li key={view.segment}>
          <a
            href={hrefOf(view.segment)}
            onClick={onLinkClick(view.segment)}
            aria-current={current === view.segment ? "page" : undefined}
          >
            {view.title}
          </a>
        </li>
      ))}
    </ul>
  </nav>
)

const SignOut = () => {
  const { signOut } = useSession()
  const [error, setError] = useState<unknown>(undefined)
  return (
    <div class="sign-out">
      <button type="button" onClick={() => signOut().catch(setError)}>Sign out</button>
      <ErrorMessage error={error} />
    </div>
  )
}

export const Shell = () => {
  const session = useSignedIn()
  const path = usePath()
  const found = viewFor(path)
  const heading = useRef<HTMLHeadingElement>(null)
  const title = found?.view.title ?? "Not found"

  // After navigating, focus moves to the new view's heading (keyboard and screen-reader users
  // would otherwise stay on the link they pressed, with no sign the page changed).
  useEffect(() => {
    document.title = `${title} · Herald console`
    heading.current?.focus()
  }, [path, title])

  const View = found?.view.component
  return (
    <div class="shell">
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">Herald</span>
        <span class="who">{session.account.email}</span>
        <KeySwitcher />
        <SignOut />
      </header>
      <Navigation current={found?.view.segment} isAdmin={session.account.is_admin} />
      <main id="main">
        <h1 tabIndex={-1} ref={heading}>{title}</h1>
        <p class="acting">
          Acting as key <strong>{activeKeyLabel(session.keys, session.active_key_id)}</strong>
        </p>
        {View === undefined || found === undefined
          ? <ErrorMessage error={new Error(`There is no page at /console/${path}.`)} />
          : <View rest={found.rest} />}
      </main>
    </div>
  )
}
