/** The domains view (DNS records and verification). */
import { Placeholder } from "../components/Placeholder.tsx"

export const DomainsView = () => <Placeholder what="The domains view (DNS records and verification)" />
