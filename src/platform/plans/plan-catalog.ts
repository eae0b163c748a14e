/**
 * The plan catalogue lives in `config/plans.json` and is seeded into the `plans` table at start-up
 * (upsert by id), so plans are data an operator edits, and the database always agrees with it.
 */
import * as fs from "node:fs"
import { Data, Effect, Schema } from "effect"

export const Overage = Schema.Struct({
  offered: Schema.Boolean,
  price_usd_cents_per_1000: Schema.optional(Schema.Int.pipe(Schema.nonNegative()))
})

export const Plan = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]*$/)),
  name: Schema.NonEmptyString,
  billing_model: Schema.Literal("sends"),
  price_usd_cents: Schema.Int.pipe(Schema.nonNegative()),
  monthly_quota: Schema.Int.pipe(Schema.nonNegative()),
  rate_per_min: Schema.Int.pipe(Schema.positive()),
  overage: Overage,
  features: Schema.Array(Schema.String),
  selectable: Schema.Boolean,
  legacy: Schema.optionalWith(Schema.Boolean, { default: () => false })
}).annotations({ identifier: "Plan" })
export type Plan = typeof Plan.Type

export const PlanCatalog = Schema.Struct({
  /** Limits of an account without a plan (DESIGN.md "Plans"). */
  no_plan: Schema.Struct({ rate_per_min: Schema.Int.pipe(Schema.positive()), monthly_quota: Schema.Int }),
  plans: Schema.NonEmptyArray(Plan)
})
export type PlanCatalog = typeof PlanCatalog.Type

export class PlanCatalogError extends Data.TaggedError("PlanCatalogError")<{ readonly message: string }> {}

const catalogFile = new URL("../../../config/plans.json", import.meta.url)

export const loadPlanCatalog = Effect.gen(function*() {
  const text = yield* Effect.try({
    try: () => fs.readFileSync(catalogFile, "utf8"),
    catch: () => new PlanCatalogError({ message: `cannot read ${catalogFile.pathname}` })
  })
  const json = yield* Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: () => new PlanCatalogError({ message: "config/plans.json is not valid JSON" })
  })
  return yield* Schema.decodeUnknown(PlanCatalog)(json).pipe(
    Effect.mapError((e) => new PlanCatalogError({ message: `config/plans.json: ${e.message}` }))
  )
})

/** The plan the bootstrap admin gets: the largest (highest quota). */
export const largestPlan = (catalog: PlanCatalog): Plan =>
  catalog.plans.reduce((best, plan) => (plan.monthly_quota > best.monthly_quota ? plan : best))
