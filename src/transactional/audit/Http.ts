import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { AuditGroup, type AuditItem } from "./Api.ts"
import { forbidden, queryTooExpensive } from "../../http/errors.ts"
import { csvDownload } from "../../http/export-response.ts"
import { type AuditEvent, AuditLog } from "./AuditLog.ts"

const CSV_COLUMNS: ReadonlyArray<keyof AuditItem & string> = [
  "ts", "event", "recipient", "subject", "from", "message_id", "request_id", "app", "attempts",
  "smtp_code", "smtp_status", "smtp_reply", "updated_at"
]

export const AuditHttpLive = HttpApiBuilder.group(groupApi(AuditGroup), "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    const { exportWriteTimeoutMs } = yield* AppConfig
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
          // Streamed from a cursor: an account's whole log (hundreds of thousands of deliveries)
          // never sits in memory at once; a client that stops reading is cut off.
          const rows = yield* audit.stream(p.client_id ?? me.accountId, query)
          return yield* csvDownload({ columns: CSV_COLUMNS, rows, writeTimeoutMs: exportWriteTimeoutMs })
        }
        const page = yield* audit.search(query, { limit: p.limit, offset: p.offset })
        return { total: page.total, limit: p.limit, offset: p.offset, items: page.items }
      }).pipe(Effect.catchTags({ SqlError: Effect.die, QueryTooExpensive: (e) => Effect.fail(queryTooExpensive(e.message, e.param)) })))
  }))
