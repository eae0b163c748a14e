/**
 * Edits that can be lost warn before leaving (#29 "Quality"): while `dirty`, closing or reloading
 * the tab asks the browser's own question (beforeunload), and a click on a console link outside
 * the form asks first (in-console navigation never unloads the page, so beforeunload alone would
 * not catch it). The check runs in the capture phase, before the link's own handler navigates.
 */
import { useEffect } from "preact/hooks"
import { BASE } from "../router.ts"

export const LEAVE_QUESTION = "You have changes that are not saved. Leave this page and lose them?"

export const useUnsavedWarning = (dirty: boolean): void => {
  useEffect(() => {
    if (!dirty) return
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      // Older Chromium needs returnValue set to show the question.
      event.returnValue = LEAVE_QUESTION
    }
    const onClick = (event: MouseEvent) => {
      const link = event.target instanceof Element ? event.target.closest("a[href]") : null
      if (link === null || !(link.getAttribute("href") ?? "").startsWith(BASE)) return
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
