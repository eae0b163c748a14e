/**
 * The queue by destination site, as GET /v1/admin/queue shows it: one snapshot per process, taken
 * at most once every HERALD_ADMIN_QUEUE_SNAPSHOT_SECONDS (15 s, the most it may be) whatever the
 * request rate (Effect.cachedWithTTL: callers that arrive while it is being taken wait for it), so
 * an operator's console polling every second — or a script hammering the route — costs the
 * database one grouped read per snapshot period.
 *
 * From the database (every replica's work): deliveries waiting (deliveries_due's rows, grouped by
 * domain and then by the site the domain was last found at), deferrals in the last hour
 * (delivery_attempts_deferred_at), each site's limits and back-off (destination_sites) and the
 * connection slots leased (destination_slots). From this process's MTA actor (MtaStatus): the SMTP
 * transactions running now. Rate caps from the shaping file.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import { MtaStatus } from "../Mta.ts"
import { MtaConfig } from "../MtaConfig.ts"
import { loadShapingFile, resolveShaping, type ShapingFile } from "../shaping.ts"

/** Sites kept in a snapshot (most waiting first): a bound on its memory; `total` still counts every site. */
export const SNAPSHOT_SITES_MAX = 10_000

interface SiteRow {
  readonly site: string
  readonly a_domain: string
  readonly name: string | null
  readonly queued: string | number
  readonly deferred: string | number
  readonly oldest_due_at: Date | null
  readonly deferrals: string | number
  readonly max_connections: number | null
  readonly paused_until: Date | null
  readonly slots_held: string | number
  readonly total: string | number
}

const siteRows = (sql: SqlClient.SqlClient, now: Date) =>
  sql<SiteRow>`
    WITH waiting AS (
      SELECT recipient_domain AS domain, count(*) FILTER (WHERE state = 'queued') AS queued,
             count(*) FILTER (WHERE state = 'deferred') AS deferred, min(next_attempt_at) AS oldest_due_at
      FROM deliveries WHERE state IN ('queued', 'deferred') GROUP BY 1
    ), deferrals AS (
      SELECT d.recipient_domain AS domain, count(*) AS n
      FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
      WHERE a.outcome = 'deferred' AND a.at >= ${new Date(now.getTime() - 3_600_000)} GROUP BY 1
    ), by_site AS (
      SELECT coalesce(dd.site, 'domain:' || coalesce(w.domain, x.domain)) AS site, min(coalesce(w.domain, x.domain)) AS a_domain,
             sum(coalesce(w.queued, 0)) AS queued, sum(coalesce(w.deferred, 0)) AS deferred, min(w.oldest_due_at) AS oldest_due_at,
             sum(coalesce(x.n, 0)) AS deferrals
      FROM waiting w FULL JOIN deferrals x ON x.domain = w.domain
        LEFT JOIN destination_domains dd ON dd.domain = coalesce(w.domain, x.domain)
      GROUP BY 1
    )
    SELECT s.*, ds.name, ds.max_connections, ds.paused_until,
           (SELECT count(*) FROM destination_slots sl WHERE sl.site = s.site AND sl.owner IS NOT NULL AND sl.lease_until > ${now}) AS slots_held,
           count(*) OVER () AS total
    FROM by_site s LEFT JOIN destination_sites ds ON ds.site = s.site
    ORDER BY s.queued + s.deferred DESC, s.deferrals DESC, s.site
    LIMIT ${SNAPSHOT_SITES_MAX}`

/** The shaping entry a site's limits come from: by the name it was registered with, else the domain's. */
const shapingOf = (file: ShapingFile, row: SiteRow) => {
  const named = row.name === null ? undefined : row.name === "default" ? file.default : file.providers.find((p) => p.name === row.name)
  if (named !== undefined && row.name !== null) return { name: row.name, maxConnections: named.max_connections, perMinute: named.max_messages_per_minute }
  const resolved = resolveShaping(file, row.a_domain)
  return { name: resolved.name, maxConnections: resolved.maxConnections, perMinute: resolved.maxMessagesPerMinute }
}

export class QueueOverview extends Effect.Service<QueueOverview>()("herald/QueueOverview", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const status = yield* MtaStatus
    const { shapingFile } = yield* MtaConfig
    const { adminQueueSnapshotMs, queryTimeoutMs } = yield* AppConfig
    const file = loadShapingFile(shapingFile)

    /** Running SMTP transactions of this process by site: the actor's lanes are keyed by domain. */
    const runningBySite = Effect.gen(function*() {
      const byDomain = new Map<string, number>()
      for (const [lane, ids] of (yield* status.snapshot).running) {
        const domain = lane.slice(lane.indexOf(" ") + 1)
        byDomain.set(domain, (byDomain.get(domain) ?? 0) + ids.size)
      }
      if (byDomain.size === 0) return new Map<string, number>()
      const sites = yield* sql<{ domain: string; site: string }>`
        SELECT domain, site FROM destination_domains WHERE domain IN ${sql.in([...byDomain.keys()])}`
      const siteOf = new Map(sites.map((r) => [r.domain, r.site]))
      const bySite = new Map<string, number>()
      for (const [domain, n] of byDomain) {
        const site = siteOf.get(domain) ?? `domain:${domain}`
        bySite.set(site, (bySite.get(site) ?? 0) + n)
      }
      return bySite
    })

    const take = Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const [rows, running] = yield* Effect.all([siteRows(sql, now), runningBySite]).pipe(
        withStatementTimeout(sql, queryTimeoutMs, { message: "The queue could not be counted within the statement timeout" })
      )
      const items = rows.map((r) => {
        const shaping = shapingOf(file, r)
        return {
          site: r.site,
          shaping: shaping.name,
          queued: Number(r.queued),
          deferred: Number(r.deferred),
          oldest_due_at: r.oldest_due_at?.toISOString() ?? null,
          deferrals_last_hour: Number(r.deferrals),
          connections: running.get(r.site) ?? 0,
          slots_held: Number(r.slots_held),
          max_connections: r.max_connections ?? shaping.maxConnections,
          max_per_minute: shaping.perMinute,
          paused_until: r.paused_until !== null && r.paused_until > now ? r.paused_until.toISOString() : null
        }
      })
      return { generated_at: now.toISOString(), total: Number(rows[0]?.total ?? 0), items }
    })

    // Uninterruptible: callers share the snapshot being taken, so one caller that goes away
    // must not cancel it for the others (and leave an interruption cached for the snapshot period).
    const current = yield* Effect.cachedWithTTL(Effect.uninterruptible(take), Duration.millis(adminQueueSnapshotMs))
    return { current } as const
  })
}) {}
