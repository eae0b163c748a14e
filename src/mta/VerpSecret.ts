/**
 * The appliance-wide secret that tags VERP return paths (verp.ts), shared through the database
 * (src/platform/appliance-secrets.ts) so a bounce can be checked by any replica: the MTA encodes
 * with it, the inbound processor decodes with it.
 */
import { Effect } from "effect"
import { applianceSecret } from "../platform/appliance-secrets.ts"

export class VerpSecret extends Effect.Service<VerpSecret>()("herald/VerpSecret", {
  effect: Effect.map(applianceSecret("verp_secret"), (value) => ({ value }) as const)
}) {}
