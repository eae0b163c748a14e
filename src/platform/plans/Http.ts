import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { HeraldApi } from "../../http/api.ts"

interface Row {
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

export const PlansHttpLive = HttpApiBuilder.group(HeraldApi, "plans", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("list", () =>
      sql<Row>`SELECT * FROM plans ORDER BY price_usd_cents, id`.pipe(
        Effect.map((rows) => ({
          items: rows.map((p) => ({
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
        })),
        Effect.orDie
      ))
  }))
