/**
 * Warns before leaving a view with unsaved work (#29 "Quality": a template, a campaign draft):
 * closing or reloading the tab asks through the browser's own `beforeunload` prompt; a click on
 * any in-console link, and the browser's back and forward, ask in a confirm dialog first. Nothing
 * is asked while no view has unsaved work.
 *
 * The links' handlers (router.onLinkClick) run on the link itself: the click listener sits on the
 * document in the capture phase, so it runs before them and stops the click when the person stays.
 * The router's popstate listener is on the window, and listeners of one target run in the order
 * they were added (capture or not): so the popstate listener is added once, when this module is
 * loaded, before the shell mounts and adds the router's; staying stops the event before the router
 * sees it and puts this page's address back.
 */
import { useEffect } from "preact/hooks"
import { BASE } from "../router.ts"

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?"

/** The address of the page with unsaved work, while there is some. */
let unsavedAt: string | undefined

if (typeof window !== "undefined") {
  window.addEventListener("popstate", (event) => {
    if (unsavedAt === undefined || window.location.href === unsavedAt || window.confirm(LEAVE_QUESTION)) return
    event.stopImmediatePropagation()
    window.history.pushState(null, "", unsavedAt)
  })
}

export const useLeaveWarning = (dirty: boolean): void => {
  useEffect(() => {
    if (!dirty) return undefined
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      // Older browsers show the prompt only when returnValue is set.
      event.returnValue = ""
    }
    const click = (event: MouseEvent) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      const link = event.target instanceof Element ? event.target.closest("a[href]") : null
      if (link === null || !(link.getAttribute("href") ?? "").startsWith(BASE)) return
      if (window.confirm(LEAVE_QUESTION)) return
      event.preventDefault()
      event.stopPropagation()
    }
    unsavedAt = window.location.href
    window.addEventListener("beforeunload", beforeUnload)
    document.addEventListener("click", click, true)
    return () => {
      unsavedAt = undefined
      window.removeEventListener("beforeunload", beforeUnload)
      document.removeEventListener("click", click, true)
    }
  }, [dirty])
}
