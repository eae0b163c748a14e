import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Chunk, Effect, Stream } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { HeraldApi } from "../../http/api.ts"
import { forbidden } from "../../http/errors.ts"
import { csvHeader, csvRow } from "../../lib/csv.ts"
import type { AuditItem } from "./Api.ts"
import { type AuditEvent, AuditLog } from "./AuditLog.ts"

const CSV_COLUMNS: ReadonlyArray<keyof AuditItem & string> = [
  "ts", "event", "recipient", "subject", "from", "message_id", "request_id", "app", "attempts",
  "smtp_code", "smtp_status", "smtp_reply", "updated_at"
]

export const AuditHttpLive = HttpApiBuilder.group(HeraldApi, "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    return handlers.handle("search", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const me = yield* CurrentKey
        if (p.client_id !== undefined && !me.isAdmin) {
          return yield* Effect.fail(forbidden("client_id is for administrators"))
        }
        const accountKeys = yield* audit.keysOfAccount(p.client_id ?? me.accountId)
        const keyIds = p.app === undefined ? accountKeys : accountKeys.filter((k) => k === p.app)
        const events = p.event === undefined ? [] : [...new Set(p.event.split(",").map((e) => e.trim() as AuditEvent))]
        const query = {
          keyIds,
          events,
          from: p.from,
          to: p.to,
          search: p.search,
          messageId: p.message_id,
          sortBy: p.sort_by,
          sortDir: p.sort_dir
        }
        if (p.format === "csv") {
          // Streamed from a cursor, one encoded piece per batch of rows: an account's whole log
          // (hundreds of thousands of deliveries) never sits in memory at once.
          const encoder = new TextEncoder()
          const lines = audit.stream(query).pipe(
            Stream.mapChunks((rows) => Chunk.of(Chunk.join(Chunk.map(rows, (row) => csvRow(CSV_COLUMNS, row)), ""))),
            Stream.prepend(Chunk.of(csvHeader(CSV_COLUMNS))),
            Stream.map((text) => encoder.encode(text))
          )
          return HttpServerResponse.stream(lines, { contentType: "text/csv; charset=utf-8" })
        }
        const page = yield* audit.search(query, { limit: p.limit, offset: p.offset })
        return { total: page.total, limit: p.limit, offset: p.offset, items: page.items }
      }).pipe(Effect.catchTag("SqlError", Effect.die)))
  }))
