/** Plans in the database (this module owns the `plans` table): seeded from the catalogue at start-up, listed for the API. */
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

interface PlanRow {
  readonly id: string
  readonly name: string
  readonly billing_model: string
  readonly price_usd_cents: number
  readonly monthly_quota: number
  readonly rate_per_min: number
  readonly overage_offered: boolean
  readonly overage_price_usd_cents_per_1000: number | null
  readonly features: ReadonlyArray<string>
  readonly selectable: boolean
}

/** Every plan, cheapest first, as `GET /v1/client/plans` shows it. */
export const listPlans = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<PlanRow>`SELECT * FROM plans ORDER BY price_usd_cents, id`
  return rows.map((p) => ({
    id: p.id,
    name: p.name,
    billing_model: p.billing_model,
    price_usd_cents: p.price_usd_cents,
    monthly_quota: p.monthly_quota,
    rate_per_min: p.rate_per_min,
    overage: {
      offered: p.overage_offered,
      price_usd_cents_per_1000: p.overage_price_usd_cents_per_1000,
      price_usd_cents_per_email: p.overage_price_usd_cents_per_1000 === null ? null : p.overage_price_usd_cents_per_1000 / 1000
    },
    features: p.features,
    selectable: p.selectable
  }))
})
