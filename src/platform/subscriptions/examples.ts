/** The reference's errors and examples for /v1/client/subscriptions (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { USAGE_RECORD } from "../usage/examples.ts"
import type { SubscriptionsGroup } from "./Api.ts"

export const subscriptionsReference: GroupReference<typeof SubscriptionsGroup> = {
  // Both endpoints' own descriptions state their errors.
  changePlan: {
    errors: "",
    request: { package_id: "scale", password: "correct horse battery" },
    response: { sub_id: "sub_8Uj1Ik4Ol7Pz0Xc3Vb6Nm", type: "upgrade", proration: { amount_usd_cents: 2580, days_charged: 16, cycle_days: 30 } }
  },
  cancelPendingChange: {
    errors: "",
    request: { password: "correct horse battery" },
    response: { ...USAGE_RECORD, pending_change: null }
  }
}
