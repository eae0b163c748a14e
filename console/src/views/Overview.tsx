/** The overview (sends over time, quota, rate-limit headroom, reputation, webhook backlog). */
import { Placeholder } from "../components/Placeholder.tsx"

export const OverviewView = () => <Placeholder what="The overview (sends over time, quota, rate-limit headroom, reputation, webhook backlog)" />
