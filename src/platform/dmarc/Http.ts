import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { DmarcGroup } from "./Api.ts"
import { forbidden, notFound } from "../../http/errors.ts"
import { AccountLimits } from "../usage/AccountLimits.ts"
import { DmarcReports } from "./DmarcReports.ts"

export const DmarcHttpLive = HttpApiBuilder.group(groupApi(DmarcGroup), "dmarc", (handlers) =>
  Effect.gen(function*() {
    const reports = yield* DmarcReports
    const limitsOf = yield* AccountLimits

    /** The caller's account, once its plan is known to include DMARC reports. */
    const dmarcAccount = Effect.gen(function*() {
      const me = yield* CurrentKey
      const limits = yield* limitsOf.of(me.accountId, new Date(yield* Clock.currentTimeMillis)).pipe(Effect.orDie)
      if (!limits.features.includes("dmarc")) {
        return yield* Effect.fail(forbidden("DMARC reports are not part of this account's plan", "feature_not_enabled"))
      }
      return me.accountId
    })

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(dmarcAccount, (accountId) => reports.list(accountId, urlParams).pipe(Effect.orDie)))
      .handle("get", ({ path }) =>
        Effect.flatMap(dmarcAccount, (accountId) =>
          reports.get(accountId, path.id).pipe(
            Effect.catchTags({
              DmarcReportNotFound: (e) => Effect.fail(notFound(`No DMARC report ${e.id} for this account`)),
              SqlError: Effect.die
            })
          )))
  }))
