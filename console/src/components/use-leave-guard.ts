/**
 * Work that can be lost (a template, a campaign draft, a segment, a list's settings) asks before it
 * is (#29 "Quality"): while any view is `dirty`, closing or reloading the tab asks the browser's own
 * question (beforeunload), and a click on an in-console link or the browser's back and forward ask
 * in a confirm dialog before the view is replaced. Staying puts the page's address back.
 *
 * The router has no way to refuse a navigation, so this listens ahead of it. The links' handlers
 * (router.onLinkClick) run on the link itself: the click listener sits on the document in the
 * capture phase, so it runs first and stops the click. The router's popstate listener is on the
 * window, and listeners of one target run in the order they were added (capture or not; a capturing
 * listener added later still ran after the router's in Chromium): so the popstate listener is added
 * once, when this module is loaded, before the shell mounts and adds the router's. A click that
 * opens a new tab, or stays on this page, loses nothing and is let through.
 */
import { useEffect } from "preact/hooks"
import { BASE } from "../router.ts"

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?"

/** The address of the page whose unsaved work is guarded, while any guard is on. */
let guarded: string | undefined
/** Views with unsaved work now (two forms of one page may each have some). */
let guards = 0

if (typeof window !== "undefined") {
  window.addEventListener("popstate", (event) => {
    if (guarded === undefined || window.location.pathname + window.location.search === guarded) return
    if (window.confirm(LEAVE_QUESTION)) return
    event.stopImmediatePropagation()
    window.history.pushState(null, "", guarded)
  })
}

const onBeforeUnload = (event: BeforeUnloadEvent) => {
  event.preventDefault()
  // Older browsers show the question only when returnValue is set.
  event.returnValue = LEAVE_QUESTION
}

/** The in-console page a plain left click on a link would replace this one with, if any. */
const leavesFor = (event: MouseEvent): boolean => {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return false
  const link = event.target instanceof Element ? event.target.closest("a[href]") : null
  if (!(link instanceof HTMLAnchorElement) || link.target === "_blank") return false
  const url = new URL(link.href, window.location.href)
  return url.origin === window.location.origin && url.pathname.startsWith(BASE) && url.pathname !== window.location.pathname
}

const onClick = (event: MouseEvent) => {
  if (!leavesFor(event) || window.confirm(LEAVE_QUESTION)) return
  event.preventDefault()
  event.stopPropagation()
}

/** While `dirty`, leaving the page or the view asks first. */
export const useLeaveGuard = (dirty: boolean): void => {
  useEffect(() => {
    if (!dirty) return undefined
    guards += 1
    if (guards === 1) {
      guarded = window.location.pathname + window.location.search
      window.addEventListener("beforeunload", onBeforeUnload)
      document.addEventListener("click", onClick, true)
    }
    return () => {
      guards -= 1
      if (guards === 0) {
        guarded = undefined
        window.removeEventListener("beforeunload", onBeforeUnload)
        document.removeEventListener("click", onClick, true)
      }
    }
  }, [dirty])
}
