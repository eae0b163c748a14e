/** The reference's errors and examples for GET /v1/client/plans (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { PlansGroup } from "./Api.ts"

export const plansReference: GroupReference<typeof PlansGroup> = {
  list: {
    errors: "No errors of its own.",
    response: {
      items: [{
        id: "growth",
        name: "Growth",
        billing_model: "monthly",
        price_usd_cents: 4900,
        monthly_quota: 100000,
        rate_per_min: 600,
        overage: { offered: true, price_usd_cents_per_1000: 60, price_usd_cents_per_email: 0.06 },
        features: ["dmarc_reports", "dedicated_support"],
        selectable: true
      }]
    }
  }
}
