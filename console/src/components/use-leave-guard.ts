/**
 * Edits that can lose work warn before leaving (#29 "Quality"): while `dirty`, closing or reloading
 * the tab asks the browser's own question (beforeunload), and a click on an in-console link asks
 * before the view is replaced. The router has no hook for this, so the click is caught on the
 * document in the capture phase, before the link's own handler navigates.
 */
import { useEffect } from "preact/hooks"
import { BASE } from "../router.ts"

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?"

export const useLeaveGuard = (dirty: boolean): void => {
  useEffect(() => {
    if (!dirty) return
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      // Older browsers show the question only when returnValue is set.
      event.returnValue = ""
    }
    const onClick = (event: MouseEvent) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      const link = event.target instanceof Element ? event.target.closest("a[href]") : null
      if (link === null || !(link.getAttribute("href") ?? "").startsWith(BASE)) return
      if (link.getAttribute("href") === window.location.pathname) return
      if (!window.confirm(LEAVE_QUESTION)) {
        event.preventDefault()
        event.stopPropagation()
      }
    }
    window.addEventListener("beforeunload", onBeforeUnload)
    document.addEventListener("click", onClick, true)
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload)
      document.removeEventListener("click", onClick, true)
    }
  }, [dirty])
}
