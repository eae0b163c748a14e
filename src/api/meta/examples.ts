/** The reference's errors and examples for /version and /health (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { MetaGroup } from "./Api.ts"

export const metaReference: GroupReference<typeof MetaGroup> = {
  version: { errors: "No errors of its own (no key needed).", response: { version: "1.4.0" } },
  health: {
    errors: "503 `database_unavailable` when the database does not answer (no key needed).",
    response: { status: "ok", database: "ok" }
  }
}
