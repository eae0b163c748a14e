/** The reference's errors and examples for the operator's suppressions and blocked domains (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { ADMIN_ONLY } from "../admin/examples.ts"
import type { AdminBlockedDomainsGroup, AdminSuppressionsGroup } from "./AdminApi.ts"

const LIST = "400 `validation_failed` (param `account_id`) for scope=account without account_id or scope=platform with one; "
  + "404 `not_found` when there is no such account."
const entry = { email: "gone@example.org", scope: "platform", account_id: null, reason: "manual", source: null, created_at: "2026-11-02T10:15:00.000Z" }
const blocked = { domain: "spamtrap.example", reason: "known spam trap", created_at: "2026-11-02T10:15:00.000Z" }

export const adminSuppressionsReference: GroupReference<typeof AdminSuppressionsGroup> = {
  list: { errors: `${ADMIN_ONLY} ${LIST}`, response: { total: 1, limit: 50, offset: 0, items: [entry] } },
  add: {
    errors: `${ADMIN_ONLY} ${LIST} 409 \`conflict\` when the address is on that list already.`,
    request: { email: "gone@example.org", scope: "platform", reason: "manual" },
    response: entry
  },
  remove: {
    errors: `${ADMIN_ONLY} ${LIST.replace("no such account.", "no such account or the address is not on that list.")}`,
    response: { email: "gone@example.org", deleted: true }
  }
}

export const adminBlockedDomainsReference: GroupReference<typeof AdminBlockedDomainsGroup> = {
  list: { errors: ADMIN_ONLY, response: { total: 1, limit: 50, offset: 0, items: [blocked] } },
  add: {
    errors: `${ADMIN_ONLY} 409 \`conflict\` when the domain is blocked already.`,
    request: { domain: "spamtrap.example", reason: "known spam trap" },
    response: blocked
  },
  remove: { errors: `${ADMIN_ONLY} 404 \`not_found\` when the domain is not blocked.`, response: { domain: "spamtrap.example", deleted: true } }
}
