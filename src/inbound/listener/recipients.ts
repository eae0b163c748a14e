/**
 * Which recipients the MX listener takes (never an open relay): addresses on the bounce domain,
 * on the configured inbound domains, and on the return-path subdomain of every customer domain
 * whose return-path MX has been verified. Everything else is refused with 550 5.7.1.
 *
 * Decided without the database where it can be (the listener answers RCPT on its own thread, and
 * relay attempts are an MX's usual refusals): only a return-path subdomain needs a lookup.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { domainOf } from "../../lib/email.ts"
import { RETURN_PATH_LABEL } from "../../platform/domains/records.ts"

const PREFIX = `${RETURN_PATH_LABEL}.`

/** Taken, refused, or the customer domain whose verified return path decides. */
export const recipientDecision = (address: string, fixedDomains: ReadonlySet<string>): boolean | { readonly customerDomain: string } => {
  const domain = domainOf(address)
  if (fixedDomains.has(domain)) return true
  return domain.startsWith(PREFIX) ? { customerDomain: domain.slice(PREFIX.length) } : false
}

/** Whether the customer domain's return-path MX has been verified. */
export const returnPathVerified = (customerDomain: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM domains WHERE domain = ${customerDomain} AND return_path_verified_at IS NOT NULL LIMIT 1`).pipe(
      Effect.map((rows) => rows.length > 0)
    )
