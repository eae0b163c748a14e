/**
 * The SQL of the destination limits (tables in migrations/0008_destination_limits.sql). Every time
 * is a parameter taken from the caller's Clock; nothing here asks the database what time it is.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface HotSite {
  readonly site: string
  /** Set when the site is paused (back-off); null when it is only full with other replicas' slots. */
  readonly paused_until: Date | null
  readonly domain: string | null
}

/** At most this many domains are handed to a claim to leave out (a claim's parameters are finite). */
const HOT_DOMAINS_MAX = 2_000

export const makeDestinationStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The site's row with its current limits, and its slot rows 0 … max-1 (once per site and process). */
  const registerSite = (site: string, name: string, maxConnections: number) =>
    Effect.gen(function*() {
      yield* sql`
        INSERT INTO destination_sites (site, name, max_connections) VALUES (${site}, ${name}, ${maxConnections})
        ON CONFLICT (site) DO UPDATE SET name = excluded.name, max_connections = excluded.max_connections
        WHERE destination_sites.name <> excluded.name OR destination_sites.max_connections <> excluded.max_connections`
      yield* sql`
        INSERT INTO destination_slots (site, slot)
        SELECT ${site}, n FROM generate_series(0, ${maxConnections}::int - 1) AS n
        ON CONFLICT DO NOTHING`
    })

  const registerDomain = (domain: string, site: string) =>
    sql`
      INSERT INTO destination_domains (domain, site) VALUES (${domain}, ${site})
      ON CONFLICT (domain) DO UPDATE SET site = excluded.site WHERE destination_domains.site <> excluded.site`.pipe(Effect.asVoid)

  /**
   * Takes one free slot of the site (never leased, released, or its lease run out), the lowest
   * first; `undefined` when every slot below `max` is held. SKIP LOCKED: replicas asking at the
   * same moment get different slots, or nothing, without waiting for each other.
   */
  const acquire = (site: string, max: number, owner: string, now: Date, leaseUntil: Date) =>
    Effect.map(
      sql<{ slot: number }>`
        UPDATE destination_slots x SET owner = ${owner}, lease_until = ${leaseUntil}
        FROM (
          SELECT site, slot FROM destination_slots
          WHERE site = ${site} AND slot < ${max}
            AND (owner IS NULL OR (lease_until <= ${now} AND owner <> ${owner}))
          ORDER BY slot
          LIMIT 1
          FOR UPDATE SKIP LOCKED
        ) free
        WHERE x.site = free.site AND x.slot = free.slot
        RETURNING x.slot`,
      (rows) => rows[0]?.slot
    )

  const release = (site: string, slots: ReadonlyArray<number>, owner: string) =>
    slots.length === 0
      ? Effect.void
      : sql`UPDATE destination_slots SET owner = NULL, lease_until = NULL
          WHERE site = ${site} AND owner = ${owner} AND slot IN ${sql.in(slots)}`.pipe(Effect.asVoid)

  const releaseAll = (owner: string) =>
    sql`UPDATE destination_slots SET owner = NULL, lease_until = NULL WHERE owner = ${owner}`.pipe(Effect.asVoid)

  /** Extends every lease of `owner`; the rows returned are the slots it still holds. */
  const refresh = (owner: string, leaseUntil: Date) =>
    sql<{ site: string; slot: number }>`
      UPDATE destination_slots SET lease_until = ${leaseUntil} WHERE owner = ${owner} RETURNING site, slot`

  /**
   * The rate (a token bucket of one, shared by every replica): reserves the site's next message
   * start, `interval` after the previous one and never in the past; returns the reserved moment.
   */
  const reserveStart = (site: string, intervalMs: number, now: Date) =>
    Effect.map(
      sql<{ next_slot_at: Date }>`
        UPDATE destination_sites
        SET next_slot_at = greatest(next_slot_at, ${now}::timestamptz) + ${intervalMs}::float8 * interval '1 millisecond'
        WHERE site = ${site}
        RETURNING next_slot_at`,
      (rows) => (rows[0] === undefined ? now.getTime() : rows[0].next_slot_at.getTime() - intervalMs)
    )

  /**
   * Back-off after 421 / 4.7.x: pauses the site for `startMs`, or twice the last pause when the
   * previous one ended less than its own length ago (up to `maxMs`). A site already paused keeps
   * its pause: the other replies of a burst do not double it again.
   */
  const pause = (site: string, now: Date, startMs: number, maxMs: number) => {
    const next = sql`CASE
      WHEN backoff_ms = 0 OR paused_until IS NULL
        OR ${now}::timestamptz > paused_until + backoff_ms * interval '1 millisecond' THEN ${startMs}::int
      ELSE least(${maxMs}::int, backoff_ms * 2) END`
    return Effect.map(
      sql<{ paused_until: Date; backoff_ms: number }>`
        UPDATE destination_sites
        SET backoff_ms = ${next}, paused_until = ${now}::timestamptz + ${next} * interval '1 millisecond'
        WHERE site = ${site} AND (paused_until IS NULL OR paused_until <= ${now})
        RETURNING paused_until, backoff_ms`,
      (rows) => rows[0]
    )
  }

  /** The sites paused now (a partial index holds only sites that were ever paused). */
  const pausedSites = (now: Date) =>
    sql<{ site: string; paused_until: Date }>`
      SELECT site, paused_until FROM destination_sites WHERE paused_until > ${now}`

  /**
   * Sites a claim of `owner` should leave alone, with their domains: paused ones, and those whose
   * every slot is leased by other replicas (their work is better left to the replicas holding the
   * connections). Reads only live rows: paused_until in the future, slots with an owner.
   */
  const hot = (owner: string, now: Date) =>
    sql<HotSite>`
      WITH full_elsewhere AS (
        SELECT x.site FROM destination_slots x JOIN destination_sites s ON s.site = x.site
        WHERE x.owner IS NOT NULL AND x.owner <> ${owner} AND x.lease_until > ${now} AND x.slot < s.max_connections
        GROUP BY x.site, s.max_connections
        HAVING count(*) >= s.max_connections
      ), hot AS (
        SELECT site, paused_until FROM destination_sites WHERE paused_until > ${now}
        UNION
        SELECT site, NULL FROM full_elsewhere
      )
      SELECT hot.site, hot.paused_until, d.domain
      FROM hot LEFT JOIN destination_domains d ON d.site = hot.site
      ORDER BY hot.paused_until IS NULL
      LIMIT ${HOT_DOMAINS_MAX}`

  return { registerSite, registerDomain, acquire, release, releaseAll, refresh, reserveStart, pause, pausedSites, hot } as const
})

export type DestinationStore = Effect.Effect.Success<typeof makeDestinationStore>
