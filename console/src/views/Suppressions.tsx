/** The suppressions view. */
import { Placeholder } from "../components/Placeholder.tsx"

export const SuppressionsView = () => <Placeholder what="The suppressions view" />
