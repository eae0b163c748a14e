/**
 * Re-verifies sending domains every HERALD_DOMAIN_RECHECK_HOURS (default 6): a TXT record that
 * disappeared starts the domain's grace window (HERALD_DOMAIN_GRACE_HOURS) instead of stopping
 * its mail at once, and the return-path MX is looked up again (envelope senders follow it).
 */
import { Clock, Config, Duration, Effect } from "effect"
import { checked } from "../../config/app-config.ts"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { Domains } from "./Domains.ts"

export const RecheckJobLive = actorLayer(
  "domain-recheck",
  Effect.gen(function*() {
    const domains = yield* Domains
    const hours = yield* checked("HERALD_DOMAIN_RECHECK_HOURS", Config.number(), "must be more than 0 hours", (n) => n > 0, 6)
    return yield* actorLoop("domain-recheck", Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const looked = yield* domains.recheck(now, new Date(now.getTime() - hours * 3_600_000))
      return looked >= 100 ? Duration.zero : Duration.minutes(1)
    }))
  })
)
