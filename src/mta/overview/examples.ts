/** The reference's errors and examples for GET /v1/admin/queue (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { AdminQueueGroup } from "./Api.ts"

export const adminQueueReference: GroupReference<typeof AdminQueueGroup> = {
  list: {
    errors: "403 `forbidden` for a key that is not an administrator's; 422 `query_too_expensive` when the snapshot could not be "
      + "computed within the statement timeout.",
    response: {
      generated_at: "2026-11-04T09:00:10.000Z",
      total: 1,
      limit: 50,
      offset: 0,
      items: [{
        site: "gmail.com",
        shaping: "gmail",
        queued: 1200,
        deferred: 35,
        oldest_due_at: "2026-11-04T08:58:00.000Z",
        deferrals_last_hour: 41,
        connections: 4,
        slots_held: 4,
        max_connections: 10,
        max_per_minute: 600,
        paused_until: null
      }]
    }
  }
}
