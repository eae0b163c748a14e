/** The reference's errors and examples for GET /v1/client/usage (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { UsageGroup } from "./Api.ts"

/** The usage record, also the answer of cancel-pending-change (src/platform/subscriptions/examples.ts). */
export const USAGE_RECORD = {
  subscriptions: [{
    package_id: "growth",
    package_name: "Growth",
    monthly_quota: 100000,
    rate_per_min: 600,
    billing_period: "2026-11",
    started_at: "2026-10-01T00:00:00.000Z"
  }],
  keys: [{ id: "key_5Gh2Jk8Lm1Np4Qr7St0V", label: "Production", sent_this_period: 12840, monthly_quota: 100000, quota_remaining: 87160 }],
  next_reset: "2026-12-01T00:00:00.000Z",
  pending_change: { package_id: "starter", effective_at: "2026-12-01T00:00:00.000Z" },
  overage: { emails: 0, amount_usd_cents: 0 }
}

export const usageReference: GroupReference<typeof UsageGroup> = {
  get: { errors: "No errors of its own.", response: USAGE_RECORD }
}
