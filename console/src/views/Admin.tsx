/** The admin view (accounts, queue, refused inbound reports). */
import { Placeholder } from "../components/Placeholder.tsx"

export const AdminView = () => <Placeholder what="The admin view (accounts, queue, refused inbound reports)" />
