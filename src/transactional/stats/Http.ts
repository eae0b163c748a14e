import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { CurrentKey } from "../../http/auth.ts"
import { queryTooExpensive } from "../../http/errors.ts"
import { groupApi } from "../../http/group-api.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import { Accounts } from "../../platform/accounts/Accounts.ts"
import { AccountLimits } from "../../platform/usage/AccountLimits.ts"
import { peekRate, rateLimitHeaders } from "../../platform/usage/RateLimiter.ts"
import { WebhookStore } from "../../webhooks/WebhookStore.ts"
import { StatsGroup } from "./Api.ts"
import { fillBuckets, periodWindow } from "./buckets.ts"
import { windowActivity } from "./rollup.ts"

export const StatsHttpLive = HttpApiBuilder.group(groupApi(StatsGroup), "stats", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const accountLimits = yield* AccountLimits
    const webhooks = yield* WebhookStore
    const { queryTimeoutMs } = yield* AppConfig
    return handlers.handle("get", ({ urlParams: { period } }) =>
      Effect.gen(function*() {
        const me = yield* CurrentKey
        const now = yield* Clock.currentTimeMillis
        const window = periodWindow(period, now)
        // Settled hours from the rollup, the last ones from the queue: each statement under the deadline.
        const rows = yield* windowActivity(me.accountId, window, now, queryTimeoutMs)
        const backlog = yield* webhooks.backlog(me.keyId)
        const account = yield* accounts.get(me.accountId)
        // The key's headroom (the overview shows it) as a send's RateLimit-* headers would give it,
        // read without counting: looking at the stats must not spend the key's rate.
        const limits = yield* accountLimits.of(me.accountId, new Date(now))
        yield* setResponseHeaders(rateLimitHeaders(yield* peekRate(sql, me.keyId, me.accountId, limits.ratePerMin, new Date(now))))
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
        AccountNotFound: Effect.die,
        AccountMissing: Effect.die
      })))
  }))
