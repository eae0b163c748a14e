/** A campaign's or a subscription's state as a badge, its colour from a class (the CSP allows no inline style). */
const CLASS: Readonly<Record<string, string>> = {
  completed: "good",
  sending: "good",
  active: "good",
  scheduled: "wait",
  paused: "wait",
  draft: "",
  cancelled: "bad"
}

export const StatusBadge = ({ status }: { status: string }) => (
  <span class={`status-badge ${CLASS[status] ?? ""}`} data-status={status}>{status}</span>
)
