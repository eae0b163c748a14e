/**
 * Warns before leaving a view with unsaved work (#29 "Quality": a template, a campaign draft):
 * closing or reloading the tab asks through the browser's own `beforeunload` prompt, and a click on
 * any in-console link asks in a confirm dialog first. The links' handlers (router.onLinkClick) run
 * on the link itself; this listens in the capture phase on the document, so it sees the click
 * before them and stops it when the person chooses to stay. Nothing is asked while `dirty` is false.
 */
import { useEffect } from "preact/hooks"
import { BASE } from "../router.ts"

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?"

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
    window.addEventListener("beforeunload", beforeUnload)
    document.addEventListener("click", click, true)
    return () => {
      window.removeEventListener("beforeunload", beforeUnload)
      document.removeEventListener("click", click, true)
    }
  }, [dirty])
}
