/** The keys and webhooks view. */
import { Placeholder } from "../components/Placeholder.tsx"

export const KeysView = () => <Placeholder what="The keys and webhooks view" />
