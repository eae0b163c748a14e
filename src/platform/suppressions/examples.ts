/** The reference's errors and examples for the suppression lists (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { SuppressionsGroup } from "./Api.ts"

const suppression = { email: "gone@example.org", reason: "bounce", source: "smtp 550 5.1.1", created_at: "2026-11-02T10:15:00.000Z" }

export const suppressionsReference: GroupReference<typeof SuppressionsGroup> = {
  list: { errors: "No errors of its own.", response: { total: 1, limit: 50, offset: 0, items: [suppression] } },
  add: {
    errors: "No errors of its own: an address on the list already gets the new reason.",
    request: { email: "ada@example.org", reason: "manual" },
    response: { email: "ada@example.org", reason: "manual", source: null, created_at: "2026-11-02T10:15:00.000Z" }
  },
  remove: {
    errors: "404 `not_found` when the address is not on this account's suppression list.",
    response: { email: "gone@example.org", deleted: true }
  }
}
