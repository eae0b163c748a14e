import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import { CurrentKey } from "../../http/auth.ts"
import { queryTooExpensive } from "../../http/errors.ts"
import { groupApi } from "../../http/group-api.ts"
import { accountActivity } from "../../mta/queue/read-models/account-activity.ts"
import { Accounts } from "../../platform/accounts/Accounts.ts"
import { WebhookStore } from "../../webhooks/WebhookStore.ts"
import { StatsGroup } from "./Api.ts"
import { fillBuckets, periodWindow } from "./buckets.ts"

export const StatsHttpLive = HttpApiBuilder.group(groupApi(StatsGroup), "stats", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const webhooks = yield* WebhookStore
    const { queryTimeoutMs } = yield* AppConfig
    return handlers.handle("get", ({ urlParams: { period } }) =>
      Effect.gen(function*() {
        const me = yield* CurrentKey
        const window = periodWindow(period, yield* Clock.currentTimeMillis)
        // One deadline for the three range scans, so a huge account cannot hold a connection long.
        const rows = yield* accountActivity(me.accountId, window.unit, window.from, window.to).pipe(
          withStatementTimeout(sql, queryTimeoutMs, { param: "period", message: "Counting this period took too long; choose a shorter period" })
        )
        const backlog = yield* webhooks.backlog(me.keyId)
        const account = yield* accounts.get(me.accountId)
        return {
          period,
          granularity: window.unit,
          buckets: fillBuckets(window, rows),
          webhook_backlog: { key_id: me.keyId, pending: backlog.pending, oldest_pending_at: backlog.oldest?.toISOString() ?? null },
          reputation: { paused: account.sending_paused_reason !== null, reason: account.sending_paused_reason }
        }
      }).pipe(Effect.catchTags({
        QueryTooExpensive: (e) => Effect.fail(queryTooExpensive(e.message, e.param)),
        SqlError: Effect.die,
        AccountNotFound: Effect.die
      })))
  }))
