/** The usage and plan view. */
import { Placeholder } from "../components/Placeholder.tsx"

export const UsageView = () => <Placeholder what="The usage and plan view" />
