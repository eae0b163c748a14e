/**
 * What the end of DATA must know about the sender and the recipients — the sender domain's state,
 * the suppressed recipients, the recipient domains on the block list — read for the submissions
 * that end together in ONE statement (group commit, src/lib/group-commit.ts), as send-context.ts
 * reads the HTTP sends'. Through accept.ts's `senderFacts` it was three statements per message,
 * then one per message: each a pool checkout, a socket write and a result to parse (send-context.ts
 * says what a round trip costs), the largest share of a submission's own CPU in bench:submission.
 * The columns and their reading are send-context.ts's; here the rate window was counted at MAIL already.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { domainOf } from "../../lib/email.ts"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { SENDER_DOMAIN_JOIN, SENDER_FACTS_COLUMNS, type SenderFacts, senderFactsOf, type SenderFactsRow } from "../send-context.ts"

export interface FactsQuestion {
  readonly accountId: string
  readonly fromEmail: string
  /** Lower case, de-duplicated. */
  readonly recipients: ReadonlyArray<string>
  readonly now: Date
}

/** Reads the facts of one submission (grouped with the others waiting). */
export type ReadSenderFacts = (question: FactsQuestion) => Effect.Effect<SenderFacts, SqlError>

interface Row extends SenderFactsRow {
  readonly i: number
}

/** Submissions per group: the questions travel as one JSON parameter, so the text never grows. */
const GROUP_QUESTIONS = 64

/** A scoped reader; `graceHours` is HERALD_DOMAIN_GRACE_HOURS. */
export const makeSenderFactsReader = (graceHours: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const readGroup = (group: ReadonlyArray<FactsQuestion>) =>
      Effect.gen(function*() {
        const questions = group.map((q, i) => ({
          i,
          account_id: q.accountId,
          from_domain: domainOf(q.fromEmail).toLowerCase(),
          recipients: q.recipients,
          domains: [...new Set(q.recipients.map(domainOf))]
        }))
        // Prepared (src/db/prepared.ts): one text for every group size.
        const rows = yield* sql<Row>`/* herald:prepared */
          WITH req AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(questions)}::jsonb)
              AS r(i integer, account_id text, from_domain text, recipients text[], domains text[])
          )
          SELECT req.i, ${sql.literal(SENDER_FACTS_COLUMNS)}
          FROM req
          ${sql.literal(SENDER_DOMAIN_JOIN)}`
        const byIndex = new Map(rows.map((row) => [row.i, row]))
        return group.map((q, i): SenderFacts => senderFactsOf(byIndex.get(i), q.now, graceHours))
      })
    const group = yield* makeGroupCommit({ write: readGroup, maxItems: GROUP_QUESTIONS })
    const read: ReadSenderFacts = (question) => group.submit(question)
    return read
  })
