/**
 * The platform block list of recipient domains, kept by the operator: a send to an address at a
 * blocked domain gets item status `rejected` (see transactional/accept.ts). Exact domain match,
 * lower case, no trailing dot. The admin API and the operator's CLI both go through this service.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { containing } from "./suppress.ts"

export interface BlockedDomainView {
  readonly domain: string
  readonly reason: string
  readonly created_at: string
}

export class BlockedDomainNotFound extends Data.TaggedError("BlockedDomainNotFound")<{ readonly domain: string }> {}
export class BlockedDomainExists extends Data.TaggedError("BlockedDomainExists")<{ readonly domain: string }> {}

/** The reason recorded when the operator gives none. */
export const DEFAULT_BLOCK_REASON = "blocked by the operator"

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

export interface BlockedDomainFilter {
  /** Substring of the domain, any case. */
  readonly domain?: string | undefined
  /** Without a limit, every entry from `offset` on. */
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

export class BlockedDomains extends Effect.Service<BlockedDomains>()("herald/BlockedDomains", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Blocks a domain. One already blocked is re-reasoned, its first block's time kept (the CLI's
     * idempotent `add`), or, with `ifExists: "refuse"`, left alone and answered with
     * BlockedDomainExists (the admin API's 409).
     */
    const add = (domain: string, reason: string, options: { readonly ifExists: "replace" | "refuse" } = { ifExists: "replace" }) =>
      Effect.gen(function*() {
        const name = normalizeDomain(domain)
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql<Row>`
          INSERT INTO blocked_domains (domain, reason, created_at)
          VALUES (${name}, ${reason}, ${now})
          ON CONFLICT (domain) ${options.ifExists === "replace" ? sql`DO UPDATE SET reason = EXCLUDED.reason` : sql`DO NOTHING`}
          RETURNING domain, reason, created_at`
        if (rows[0] === undefined) return yield* new BlockedDomainExists({ domain: name })
        return view(rows[0])
      })

    const remove = (domain: string) =>
      Effect.gen(function*() {
        const name = normalizeDomain(domain)
        const rows = yield* sql`DELETE FROM blocked_domains WHERE domain = ${name} RETURNING domain`
        if (rows.length === 0) return yield* new BlockedDomainNotFound({ domain: name })
        return { domain: name, deleted: true as const }
      })

    /** Whether mail to `domain` is refused by policy (SMTP submission's RCPT; the send path reads the list with its recipients). */
    const isBlocked = (domain: string) =>
      Effect.map(sql`SELECT 1 FROM blocked_domains WHERE domain = ${normalizeDomain(domain)}`, (rows) => rows.length > 0)

    /** The blocked domains in name order, with the count of all that match the filter. */
    const list = (filter: BlockedDomainFilter = {}) =>
      Effect.gen(function*() {
        const where = filter.domain === undefined ? sql`TRUE` : sql`domain LIKE ${containing(filter.domain)}`
        const [count] = yield* sql<{ total: string }>`SELECT count(*) AS total FROM blocked_domains WHERE ${where}`
        const rows = yield* sql<Row>`
          SELECT domain, reason, created_at FROM blocked_domains WHERE ${where}
          ORDER BY domain LIMIT ${filter.limit ?? null} OFFSET ${filter.offset ?? 0}` // LIMIT NULL: no limit
        return { total: Number(count?.total ?? 0), items: rows.map(view) }
      })

    return { add, remove, list, isBlocked } as const
  })
}) {}
