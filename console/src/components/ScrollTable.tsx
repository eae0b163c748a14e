/**
 * A table that may be wider than a 390 px screen: it scrolls inside its own region, never the page
 * sideways. The region is focusable and named, so a keyboard user can scroll it too (axe's
 * scrollable-region-focusable).
 */
import type { ComponentChildren } from "preact"

export const ScrollTable = ({ children, label }: { children: ComponentChildren; label: string }) => (
  <div class="scroll-table" role="region" aria-label={label} tabIndex={0}>
    {children}
  </div>
)
