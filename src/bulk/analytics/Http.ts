import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import type { QueryTooExpensive } from "../../db/statement-timeout.ts"
import { groupApi } from "../../http/group-api.ts"
import { AnalyticsGroup } from "./Api.ts"
import { CurrentKey } from "../../http/auth.ts"
import { notFound, queryTooExpensive } from "../../http/errors.ts"
import { csvDownload } from "../../http/export-response.ts"
import { Analytics, type RecipientDetail } from "./Analytics.ts"

const CSV_COLUMNS: ReadonlyArray<keyof RecipientDetail & string> = ["email", "status", "sent_at", "first_opened_at", "first_clicked_at"]

export const AnalyticsHttpLive = HttpApiBuilder.group(groupApi(AnalyticsGroup), "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* Analytics
    const { exportWriteTimeoutMs } = yield* AppConfig
    const tooExpensive = (e: QueryTooExpensive) => Effect.fail(queryTooExpensive(e.message, e.param))
    return handlers
      .handle("campaign", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          if (urlParams.format === "csv") {
            // As the audit export: streamed from a cursor on the exports' pool, so a large
            // campaign's recipients never sit in memory at once; formula-looking cells prefixed.
            const rows = yield* analytics.recipients(me, path.id)
            return yield* csvDownload({
              columns: CSV_COLUMNS,
              rows,
              writeTimeoutMs: exportWriteTimeoutMs,
              headers: { "content-disposition": `attachment; filename="${path.id.replace(/[^A-Za-z0-9_-]/g, "")}-analytics.csv"` }
            })
          }
          return yield* analytics.analytics(me, path.id)
        }).pipe(
          Effect.catchTags({
            AnalyticsCampaignNotFound: (e) => Effect.fail(notFound(`No campaign ${e.id}`)),
            QueryTooExpensive: tooExpensive,
            SqlError: Effect.die
          })
        ))
      .handle("rates", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => analytics.rates(me, urlParams.period)).pipe(
          Effect.catchTags({ QueryTooExpensive: tooExpensive, SqlError: Effect.die })
        ))
  }))
