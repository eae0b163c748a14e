/**
 * Deadlines on what one piece of work may cost the database (issue 26 finding 9). Nothing bounded a
 * segment preview, a contact search or an analytics read: 50 engagement rules over 620,000 contacts
 * ran 4 s of PostgreSQL CPU per call, and any key could repeat it.
 *
 * `withStatementTimeout` runs an effect in a transaction whose statements each stop after `ms`
 * (`SET LOCAL statement_timeout`, as `set_config(…, true)` so the value is a bound parameter): the
 * server cancels the statement itself, so the deadline holds however the plan turns out. A
 * statement cancelled by it fails as `QueryTooExpensive`, which the API answers 422
 * `query_too_expensive` naming what to narrow — never a 500.
 *
 * Two limits (src/config/app-config.ts): `HERALD_QUERY_TIMEOUT_MS` for the reads a request runs,
 * `HERALD_LONG_QUERY_TIMEOUT_MS` for the bulk work that legitimately runs long (freezing a
 * campaign's audience, an import, a fan-out batch), sized by bench/audience.ts.
 */
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Data, Effect } from "effect"

/** PostgreSQL's SQLSTATE for a statement cancelled (by statement_timeout here). */
export const QUERY_CANCELED = "57014"

/** What the caller can narrow (`param`) and in what words, for the 422. */
export interface Narrowing {
  readonly param?: string | undefined
  readonly message: string
}

export class QueryTooExpensive extends Data.TaggedError("QueryTooExpensive")<{
  readonly param: string | undefined
  readonly message: string
  readonly timeoutMs: number
}> {}

/** A statement that PostgreSQL cancelled: the statement timeout (or an operator's pg_cancel_backend). */
export const isStatementTimeout = (e: unknown): boolean =>
  e instanceof SqlError && (e.cause as { readonly code?: unknown } | null)?.code === QUERY_CANCELED

/**
 * `effect` in a transaction (a savepoint inside one already open) whose statements each get at
 * most `ms`; one that hits it fails the whole effect with `QueryTooExpensive` described by `narrow`.
 * The transaction holds one pooled connection for the effect's duration: use it around reads, not
 * around work that waits on anything but the database.
 */
export const withStatementTimeout = (sql: SqlClient.SqlClient, ms: number, narrow: Narrowing) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError | QueryTooExpensive, R> =>
  sql.withTransaction(Effect.zipRight(setStatementTimeout(sql, ms), effect)).pipe(
    Effect.catchIf((e) => isStatementTimeout(e), () =>
      Effect.fail(new QueryTooExpensive({ param: narrow.param, message: narrow.message, timeoutMs: ms })))
  )

/**
 * Within a transaction already open (the long bulk work opens its own): its statements from here on
 * get at most `ms` each, until it ends.
 */
export const setStatementTimeout = (sql: SqlClient.SqlClient, ms: number): Effect.Effect<void, SqlError> =>
  Effect.asVoid(sql`SELECT set_config('statement_timeout', ${String(Math.max(1, Math.round(ms)))}, true)`)

/**
 * A plain list page of one key's resources (lists, campaigns, templates, sequences, segments) under
 * the request limit: a key with very many rows, paged far, is answered 422 naming `offset` instead of
 * holding a pooled connection for as long as PostgreSQL takes.
 */
export const withPageDeadline = (sql: SqlClient.SqlClient, ms: number, what: string) =>
  withStatementTimeout(sql, ms, {
    param: "offset",
    message: `Listing ${what} took longer than ${ms} ms: ask for an earlier page (a smaller offset)`
  })
