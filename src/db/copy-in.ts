/**
 * `COPY … FROM STDIN` on the connection of the transaction the caller runs in, so the rows it copies
 * (into a TEMP table of that session, say) are seen by the transaction's next statements and go
 * with its rollback. @effect/sql has no COPY: the raw `pg` client under the transaction's connection
 * is reached through `SqlClient.TransactionConnection` (@effect/sql-pg's connection keeps it as `pg`),
 * and pg-copy-streams speaks the protocol on it. The copy is one statement of the transaction: its
 * `statement_timeout` bounds it, and a cancelled copy fails as the SqlError the timeout's callers
 * recognise (statement-timeout.ts).
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Buffer } from "node:buffer"
import { Effect } from "effect"
import type pg from "pg"
import { from as copyFrom } from "pg-copy-streams"

/** The raw client of the transaction the effect runs in; a defect outside one (nothing to copy into). */
const transactionClient = Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (held) => {
  const client = held._tag === "Some" ? (held.value[0] as unknown as { readonly pg?: pg.PoolClient }).pg : undefined
  return client === undefined
    ? Effect.dieMessage("copyIn runs inside a transaction of @effect/sql-pg's client")
    : Effect.succeed(client)
})

/** Copies `text` (COPY's text format, one line per row) into `target` (`table (columns)`), in the caller's transaction. */
export const copyIn = (target: string, text: Uint8Array): Effect.Effect<void, SqlError> =>
  Effect.flatMap(transactionClient, (client) =>
    Effect.async<void, SqlError>((resume) => {
      let settled = false
      const done = (error?: Error) => {
        if (settled) return
        settled = true
        resume(error === undefined ? Effect.void : Effect.fail(new SqlError({ cause: error, message: `Failed to copy rows into ${target}` })))
      }
      const stream = client.query(copyFrom(`COPY ${target} FROM STDIN`))
      stream.on("error", done)
      // pg-copy-streams emits 'finish' once the server has answered the copy's end.
      stream.on("finish", () => done())
      stream.end(Buffer.from(text.buffer, text.byteOffset, text.byteLength))
    }))
