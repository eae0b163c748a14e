/** Plans in the database: seeded from the catalogue at start-up, read by accounts and quotas. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PlanCatalog } from "./plan-catalog.ts"

export const seedPlans = (catalog: PlanCatalog) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const plan of catalog.plans) {
      yield* sql`
        INSERT INTO plans (id, name, billing_model, price_usd_cents, monthly_quota, rate_per_min,
          overage_offered, overage_price_usd_cents_per_1000, features, selectable, legacy)
        VALUES (${plan.id}, ${plan.name}, ${plan.billing_model}, ${plan.price_usd_cents}, ${plan.monthly_quota},
          ${plan.rate_per_min}, ${plan.overage.offered}, ${plan.overage.price_usd_cents_per_1000 ?? null},
          ${JSON.stringify(plan.features)}::jsonb, ${plan.selectable}, ${plan.legacy})
        ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, billing_model = EXCLUDED.billing_model,
          price_usd_cents = EXCLUDED.price_usd_cents, monthly_quota = EXCLUDED.monthly_quota,
          rate_per_min = EXCLUDED.rate_per_min, overage_offered = EXCLUDED.overage_offered,
          overage_price_usd_cents_per_1000 = EXCLUDED.overage_price_usd_cents_per_1000,
          features = EXCLUDED.features, selectable = EXCLUDED.selectable, legacy = EXCLUDED.legacy`
    }
  })
