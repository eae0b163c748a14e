/**
 * Asks again every `everyMs` while `active` and the page is visible: live progress (a campaign
 * sending) without a request stream for a tab nobody looks at. Stops when `active` turns false
 * (the campaign ended) and asks at once when the page becomes visible again.
 */
import { useEffect } from "preact/hooks"

export const useVisiblePoll = (active: boolean, everyMs: number, poll: () => void): void => {
  useEffect(() => {
    if (!active) return undefined
    let timer: ReturnType<typeof setInterval> | undefined
    const start = () => {
      if (timer === undefined) timer = setInterval(poll, everyMs)
    }
    const stop = () => {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    }
    const onVisibility = () => {
      if (document.visibilityState === "visible") {
        poll()
        start()
      } else {
        stop()
      }
    }
    if (document.visibilityState === "visible") start()
    document.addEventListener("visibilitychange", onVisibility)
    return () => {
      stop()
      document.removeEventListener("visibilitychange", onVisibility)
    }
    // `poll` is rebuilt each render; a reload function from useLoad is stable.
  }, [active, everyMs])
}
