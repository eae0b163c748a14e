/**
 * The platform block list of recipient domains, kept by the operator: a send to an address at a
 * blocked domain gets item status `rejected` (see transactional/accept.ts). Exact domain match,
 * lower case, no trailing dot.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"

export interface BlockedDomainView {
  readonly domain: string
  readonly reason: string
  readonly created_at: string
}

export class BlockedDomainNotFound extends Data.TaggedError("BlockedDomainNotFound")<{ readonly domain: string }> {}

interface Row {
  readonly domain: string
  readonly reason: string
  readonly created_at: Date
}

const view = (row: Row): BlockedDomainView => ({
  domain: row.domain,
  reason: row.reason,
  created_at: row.created_at.toISOString()
})

/** `Example.COM.` → `example.com`. */
export const normalizeDomain = (domain: string): string => domain.trim().toLowerCase().replace(/\.$/, "")

export class BlockedDomains extends Effect.Service<BlockedDomains>()("herald/BlockedDomains", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Blocks (or re-reasons) a domain; idempotent, the first block's time is kept. */
    const add = (domain: string, reason: string) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql<Row>`
          INSERT INTO blocked_domains (domain, reason, created_at)
          VALUES (${normalizeDomain(domain)}, ${reason}, ${now})
          ON CONFLICT (domain) DO UPDATE SET reason = EXCLUDED.reason
          RETURNING domain, reason, created_at`
        return view(rows[0]!)
      })

    const remove = (domain: string) =>
      Effect.gen(function*() {
        const name = normalizeDomain(domain)
        const rows = yield* sql`DELETE FROM blocked_domains WHERE domain = ${name} RETURNING domain`
        if (rows.length === 0) return yield* new BlockedDomainNotFound({ domain: name })
        return { domain: name, deleted: true as const }
      })

    const list = () =>
      sql<Row>`SELECT domain, reason, created_at FROM blocked_domains ORDER BY domain`.pipe(
        Effect.map((rows) => ({ total: rows.length, items: rows.map(view) }))
      )

    return { add, remove, list } as const
  })
}) {}
