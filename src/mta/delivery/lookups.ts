/**
 * What attempts look up again and again, each cached: a sending domain's DKIM key (parsed), a
 * recipient domain's MX route and its hosts' addresses. Concurrent misses share one lookup.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { prepareKey, type SigningKey } from "../dkim.ts"
import { makeLookupCache } from "../lookup-cache.ts"
import { resolveRoute, resolveTargets, type Route, type Target } from "../mx.ts"
import type { DeliveryQueue } from "../queue/DeliveryQueue.ts"

/**
 * How long an MX route and its hosts' addresses are used. Node's resolver does not report the
 * TTL of MX answers; 30 s is below what most domains publish (300 s to hours) and
 * turns a lookup per delivery into one per domain per 30 s. Failed lookups are not kept.
 */
const ROUTE_TTL_MS = 30_000
const ROUTES_KEPT = 10_000

/**
 * The signer of system mail, which has no sending domain row: the appliance's own key
 * (src/mta/tls-rpt/appliance-key.ts), under the mail's From domain.
 */
export const APPLIANCE_SIGNER = "appliance"

export const makeLookups = (queue: DeliveryQueue, applianceKeyPem: Effect.Effect<string, SqlError>) => {
  // Parsed keys are small (a KeyObject each): a thousand of them is a few MB. Parsing a PEM costs
  // more than signing, so concurrent misses share one read and one parse.
  const keys = makeLookupCache<SigningKey, SqlError>({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: 1_000, keep: () => true })
  const routes = makeLookupCache<Route, never>({ ttlMs: ROUTE_TTL_MS, maxEntries: ROUTES_KEPT, keep: (r) => r._tag === "hosts" })
  const targets = makeLookupCache<ReadonlyArray<Target>, never>({ ttlMs: ROUTE_TTL_MS, maxEntries: ROUTES_KEPT, keep: (t) => t.length > 0 })

  /** The domain's signing key; a domain without one is a defect (every sending domain gets its key when added). */
  const keyOf = (domainId: string, selector: string, domain: string) =>
    keys.get(
      `${domainId}/${selector}`,
      Effect.flatMap(domainId === APPLIANCE_SIGNER ? applianceKeyPem : queue.dkimKey(domainId), (pem) =>
        pem === undefined
          ? Effect.die(new Error(`the domain ${domain} has no DKIM key`))
          : Effect.sync(() => prepareKey(domain, selector, pem)))
    )

  const routeOf = (domain: string) => routes.get(domain, resolveRoute(domain))
  const targetsOf = (hosts: ReadonlyArray<string>) => targets.get(hosts.join(" "), resolveTargets(hosts))

  return { keyOf, routeOf, targetsOf } as const
}
