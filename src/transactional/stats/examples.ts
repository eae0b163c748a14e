/** The reference's errors and examples for GET /v1/client/stats (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { StatsGroup } from "./Api.ts"

const bucket = (start: string, sent: number) => ({ start, sent, delivered: sent - 3, deferred: 2, bounced: 1, complained: 0, failed: 0 })

export const statsReference: GroupReference<typeof StatsGroup> = {
  get: {
    errors: "400 `validation_failed` (param `period`) for a period other than 24h, 7d or 30d; 422 `query_too_expensive` when "
      + "the read runs past the statement timeout (choose a shorter period).",
    response: {
      period: "7d",
      granularity: "day",
      buckets: [bucket("2026-11-03T00:00:00.000Z", 412), bucket("2026-11-04T00:00:00.000Z", 388)],
      webhook_backlog: { key_id: "key_5Gh2Jk8Lm1Np4Qr7St0V", pending: 0, oldest_pending_at: null },
      reputation: { paused: false, reason: null }
    }
  }
}
