/** A view not built yet (phase 1 of #28): says so plainly instead of pretending. */
export const Placeholder = ({ what }: { what: string }) => (
  <p class="notice">{what} is not built yet: it arrives in the next step of the console (issue #28).</p>
)
