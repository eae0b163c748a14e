import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Chunk, Effect, Stream } from "effect"
import { HeraldApi } from "../../http/api.ts"
import { CurrentKey } from "../../http/auth.ts"
import { notFound } from "../../http/errors.ts"
import { csvHeader, csvRow } from "../../lib/csv.ts"
import { Analytics, type RecipientDetail } from "./Analytics.ts"

const CSV_COLUMNS: ReadonlyArray<keyof RecipientDetail & string> = ["email", "status", "sent_at", "first_opened_at", "first_clicked_at"]

export const AnalyticsHttpLive = HttpApiBuilder.group(HeraldApi, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* Analytics
    return handlers
      .handle("campaign", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          if (urlParams.format === "csv") {
            // As the audit export: one encoded piece per batch of rows from a cursor, so a large
            // campaign's recipients never sit in memory at once; formula-looking cells prefixed.
            const encoder = new TextEncoder()
            const rows = yield* analytics.recipients(me, path.id)
            const lines = rows.pipe(
              Stream.mapChunks((batch) => Chunk.of(Chunk.join(Chunk.map(batch, (row) => csvRow(CSV_COLUMNS, row)), ""))),
              Stream.prepend(Chunk.of(csvHeader(CSV_COLUMNS))),
              Stream.map((text) => encoder.encode(text))
            )
            return HttpServerResponse.stream(lines, {
              contentType: "text/csv; charset=utf-8",
              headers: { "content-disposition": `attachment; filename="${path.id.replace(/[^A-Za-z0-9_-]/g, "")}-analytics.csv"` }
            })
          }
          return yield* analytics.analytics(me, path.id)
        }).pipe(
          Effect.catchTags({
            AnalyticsCampaignNotFound: (e) => Effect.fail(notFound(`No campaign ${e.id}`)),
            SqlError: Effect.die
          })
        ))
      .handle("rates", ({ urlParams }) => Effect.flatMap(CurrentKey, (me) => analytics.rates(me, urlParams.period)).pipe(Effect.orDie))
  }))
