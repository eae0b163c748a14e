/**
 * Edits that can lose work warn before leaving (#29 "Quality"): while `dirty`, closing or reloading
 * the tab asks the browser's own question (beforeunload), and a click on an in-console link or the
 * browser's back and forward buttons ask before the view is replaced. The router has no hook for
 * this: the click is caught on the document in the capture phase, before the link's own handler
 * navigates; popstate by a listener added when this module loads, so before the router's (listeners
 * run in the order they were added, and the router's would replace the view at once). Staying puts
 * the page's address back.
 */
import { useEffect } from "preact/hooks"
import { BASE } from "../router.ts"

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?"

/** The address of the page whose unsaved work is guarded, while a guard is on. */
let guarded: string | undefined
let guards = 0

// Not in the import preview's worker, which loads the console's script without a window (contacts/preview-worker.ts).
if (typeof window !== "undefined") {
  window.addEventListener("popstate", (event) => {
    if (guarded === undefined || window.confirm(LEAVE_QUESTION)) return
    event.stopImmediatePropagation()
    window.history.pushState(null, "", guarded)
  })
}

const onBeforeUnload = (event: BeforeUnloadEvent) => {
  event.preventDefault()
  // Older browsers show the question only when returnValue is set.
  event.returnValue = ""
}

const onClick = (event: MouseEvent) => {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const link = event.target instanceof Element ? event.target.closest("a[href]") : null
  const href = link?.getAttribute("href") ?? ""
  if (!href.startsWith(BASE) || href === window.location.pathname) return
  if (!window.confirm(LEAVE_QUESTION)) {
    event.preventDefault()
    event.stopPropagation()
  }
}

export const useLeaveGuard = (dirty: boolean): void => {
  useEffect(() => {
    if (!dirty) return
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
