/**
 * Which recipients the MX listener takes (never an open relay): addresses on the bounce domain,
 * on the configured inbound domains, and on the return-path subdomain of every customer domain
 * whose return-path MX has been verified. Everything else is refused with 550 5.7.1.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { domainOf } from "../../lib/email.ts"
import { RETURN_PATH_LABEL } from "../../platform/domains/records.ts"

export const acceptsRecipient = (address: string, fixedDomains: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const domain = domainOf(address)
    if (fixedDomains.has(domain)) return true
    const prefix = `${RETURN_PATH_LABEL}.`
    if (!domain.startsWith(prefix)) return false
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      SELECT 1 FROM domains WHERE domain = ${domain.slice(prefix.length)} AND return_path_verified_at IS NOT NULL LIMIT 1`
    return rows.length > 0
  })
