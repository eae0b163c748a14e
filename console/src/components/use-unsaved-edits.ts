/**
 * Edits that can be lost (a template, a campaign draft) ask before they are: closing or reloading
 * the tab (`beforeunload`, the browser's own question), and leaving inside the console — a click
 * on any in-console link (the navigation, a view's own links) or the back and forward buttons.
 *
 * The router has no way to refuse a navigation, so this listens ahead of it: a click listener in
 * the capture phase on the window runs before the link's own handler (Preact attaches those to the
 * element) and can stop it; a `popstate` listener in the capture phase runs before the router's and
 * puts the editor's URL back when the person stays. A click that opens a new tab loses nothing and
 * is let through.
 */
import { useEffect, useRef } from "preact/hooks"
import { BASE } from "../router.ts"

export const UNSAVED_QUESTION = "You have unsaved edits. Leave this page and lose them?"

// The console's tsconfig has DOM types; event targets are Elements for clicks on the page.
const inConsoleLink = (event: MouseEvent): HTMLAnchorElement | undefined => {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return undefined
  const target = event.target instanceof Element ? event.target.closest("a[href]") : null
  if (!(target instanceof HTMLAnchorElement) || target.target === "_blank") return undefined
  const url = new URL(target.href, window.location.href)
  if (url.origin !== window.location.origin || !url.pathname.startsWith(BASE)) return undefined
  return url.pathname === window.location.pathname ? undefined : target
}

/** While `dirty`, leaving the page or the view asks first (`question` in the in-console case). */
export const useUnsavedEdits = (dirty: boolean, question: string = UNSAVED_QUESTION): void => {
  // The listeners are added once per dirty period; the URL to come back to is the one it began at.
  const here = useRef("")
  useEffect(() => {
    if (!dirty) return
    here.current = window.location.pathname + window.location.search
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      // Older browsers show the question only when returnValue is set.
      event.returnValue = question
    }
    const onClick = (event: MouseEvent) => {
      if (inConsoleLink(event) === undefined || window.confirm(question)) return
      event.preventDefault()
      event.stopImmediatePropagation()
    }
    const onPopState = (event: PopStateEvent) => {
      if (window.confirm(question)) return
      event.stopImmediatePropagation()
      window.history.pushState(null, "", here.current)
    }
    window.addEventListener("beforeunload", onBeforeUnload)
    window.addEventListener("click", onClick, { capture: true })
    window.addEventListener("popstate", onPopState, { capture: true })
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload)
      window.removeEventListener("click", onClick, { capture: true })
      window.removeEventListener("popstate", onPopState, { capture: true })
    }
  }, [dirty, question])
}
