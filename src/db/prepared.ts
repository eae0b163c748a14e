/**
 * Named (prepared) statements for the hot queries. @effect/sql-pg sends every statement unnamed,
 * so PostgreSQL parses, analyses and plans it on every call; for the send's one read
 * (src/transactional/send-context.ts: a JSON recordset, the rate windows' upsert, the limits'
 * joins, two sub-selects) planning cost several times its execution (pg_stat_statements,
 * docs/benchmarks.md "Where the time goes"). A statement whose text begins with `PREPARED` is sent
 * named instead: parsed once per connection, and after five executions PostgreSQL may keep a
 * generic plan for it. Marked so far: that read, the quota reservation (Quota.ts, QuotaReserver.ts),
 * a submission's sender facts (submission/sender-facts.ts) and the webhook dispatcher's fan-out,
 * claims, give-backs and attempt records (WebhookStore.ts).
 *
 * The pool's connections are `PreparingClient`s (src/db/database.ts); nothing else changes for a
 * caller. Only marked texts are named, and at most MAX_NAMED distinct texts (a marked statement
 * whose text varies, say with a group's size, stops being named past that), so the statements a
 * connection keeps prepared stay bounded.
 */
import { createHash } from "node:crypto"
import pg from "pg"

/** The mark a statement's text starts with to be sent as a named statement: write it literally, first in the template. */
export const PREPARED = "/* herald:prepared */"

/** Distinct texts named, at most (each connection prepares at most these). */
const MAX_NAMED = 64

const names = new Map<string, string>()

/** The name `text` is prepared under, or undefined (not marked, or past MAX_NAMED). */
export const preparedName = (text: string): string | undefined => {
  if (!text.startsWith(PREPARED)) return undefined
  const known = names.get(text)
  if (known !== undefined || names.size >= MAX_NAMED) return known
  const name = `herald_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`
  names.set(text, name)
  return name
}

/** A `pg` client that sends marked statements named (`{ name, text, values }`), everything else as given. */
export class PreparingClient extends pg.Client {
  // pg's `query` has a dozen overloads; this one passes every form through and renames the one it knows.
  override query(...args: Array<any>): any {
    const [config, values, callback] = args
    if (typeof config === "string" && (Array.isArray(values) || values === undefined)) {
      const name = preparedName(config)
      if (name !== undefined) return super.query({ name, text: config, values }, callback)
    }
    return (super.query as (...a: Array<unknown>) => unknown)(...args)
  }
}
