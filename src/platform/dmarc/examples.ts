/** The reference's errors and examples for the DMARC reports (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { DmarcGroup } from "./Api.ts"

const PLAN = "403 `feature_not_enabled` when DMARC reports are not part of the account's plan."
const item = {
  id: 42,
  domain: "example.org",
  org_name: "google.com",
  report_id: "12893456781234567890",
  date_begin: 1793491200,
  date_end: 1793577599,
  policy_p: "none"
}

export const dmarcReference: GroupReference<typeof DmarcGroup> = {
  list: { errors: PLAN, response: { page: 1, per_page: 50, total: 1, items: [item] } },
  get: {
    errors: `${PLAN} 404 \`not_found\` when the account has no report \`{id}\`.`,
    response: {
      ...item,
      messages: 1340,
      received_at: "2026-11-03T06:12:00.000Z",
      records: [
        { source_ip: "203.0.113.25", count: 1332, disposition: "none", dkim: "pass", spf: "pass", header_from: "example.org" },
        { source_ip: "198.51.100.7", count: 8, disposition: "none", dkim: "fail", spf: "fail", header_from: "example.org" }
      ]
    }
  }
}
