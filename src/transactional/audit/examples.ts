/** The reference's errors and examples for GET /v1/mail/audit (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { AUDIT_PAGE_EXAMPLE, type AuditGroup } from "./Api.ts"

export const auditReference: GroupReference<typeof AuditGroup> = {
  search: {
    errors: "403 `forbidden` when a client key gives client_id (it is for administrators); 422 `query_too_expensive` (param "
      + "names what to narrow) when the search runs past the statement timeout.",
    response: AUDIT_PAGE_EXAMPLE
  }
}
