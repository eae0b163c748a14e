/**
 * History routing under /console/: `/console/messages/msg_…` is a real URL (the appliance answers
 * every /console/ path that is not an asset with the index page), so links can be shared and
 * opened in a new tab. A route is a path below /console/ split into segments.
 */
import { useEffect, useState } from "preact/hooks"

export const BASE = "/console/"

/** The path below /console/, without leading or trailing slashes ("" for the overview). */
const currentPath = (): string =>
  window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length).replace(/\/+$/, "") : ""

export const hrefOf = (path: string): string => `${BASE}${path}`

const listeners = new Set<() => void>()

export const navigate = (path: string): void => {
  window.history.pushState(null, "", hrefOf(path))
  for (const listener of listeners) listener()
}

/** The current path, re-rendering on navigation (links, back and forward). */
export const usePath = (): string => {
  const [path, setPath] = useState(currentPath)
  useEffect(() => {
    const update = () => setPath(currentPath())
    listeners.add(update)
    window.addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      window.removeEventListener("popstate", update)
    }
  }, [])
  return path
}

/** A click on an in-console link: navigate without a page load, unless the user wants a new tab. */
export const onLinkClick = (path: string) => (event: MouseEvent): void => {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  navigate(path)
}
