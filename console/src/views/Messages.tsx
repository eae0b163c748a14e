/** The messages view (the audit, each message's timeline and content). */
import { Placeholder } from "../components/Placeholder.tsx"

export const MessagesView = () => <Placeholder what="The messages view (the audit, each message's timeline and content)" />
