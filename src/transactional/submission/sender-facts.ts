/**
 * What the end of DATA must know about the sender and the recipients — the sender domain's state,
 * the suppressed recipients, the recipient domains on the block list — read for the submissions
 * that end together in ONE statement (group commit, src/lib/group-commit.ts), as send-context.ts
 * reads the HTTP sends'. Through accept.ts's `senderFacts` it was three statements per message,
 * then one per message: each a pool checkout, a socket write and a result to parse (send-context.ts
 * says what a round trip costs), the largest share of a submission's own CPU in bench:submission.
 * The conditions are send-context.ts's; here the rate window was counted at MAIL already.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { domainOf } from "../../lib/email.ts"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { sendingAllowed } from "../../platform/domains/records.ts"
import type { SuppressionReason } from "../../platform/suppressions/Suppressions.ts"
import type { SenderFacts } from "../send-context.ts"

export interface FactsQuestion {
  readonly accountId: string
  readonly fromEmail: string
  /** Lower case, de-duplicated. */
  readonly recipients: ReadonlyArray<string>
  readonly now: Date
}

/** Reads the facts of one submission (grouped with the others waiting). */
export type ReadSenderFacts = (question: FactsQuestion) => Effect.Effect<SenderFacts, SqlError>

interface Row {
  readonly i: number
  readonly domain_registered: boolean
  readonly domain_verified_at: Date | null
  readonly domain_verification_lost_at: Date | null
  readonly suppressed: ReadonlyArray<{ readonly email: string; readonly reason: SuppressionReason }> | null
  readonly blocked: ReadonlyArray<string> | null
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
          WITH q AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(questions)}::jsonb)
              AS r(i integer, account_id text, from_domain text, recipients text[], domains text[])
          )
          SELECT q.i, d.account_id IS NOT NULL AS domain_registered,
            d.verified_at AS domain_verified_at,
            d.verification_lost_at AS domain_verification_lost_at,
            (SELECT json_agg(json_build_object('email', s.email, 'reason', s.reason)) FROM suppressions s
              WHERE s.email = ANY(q.recipients) AND (s.account_id = q.account_id OR s.account_id IS NULL)) AS suppressed,
            ARRAY(SELECT b.domain FROM blocked_domains b WHERE b.domain = ANY(q.domains)) AS blocked
          FROM q
          LEFT JOIN domains d ON d.account_id = q.account_id AND d.domain = q.from_domain`
        const byIndex = new Map(rows.map((row) => [row.i, row]))
        return group.map((q, i): SenderFacts => {
          const row = byIndex.get(i)
          return {
            domainState: row?.domain_registered !== true ? "not_registered" : sendingAllowed(
              { verifiedAt: row.domain_verified_at, verificationLostAt: row.domain_verification_lost_at },
              q.now,
              graceHours
            ),
            suppressed: new Map((row?.suppressed ?? []).map((s) => [s.email, s.reason])),
            blockedDomains: new Set(row?.blocked ?? [])
          }
        })
      })
    const group = yield* makeGroupCommit({ write: readGroup, maxItems: GROUP_QUESTIONS })
    const read: ReadSenderFacts = (question) => group.submit(question)
    return read
  })
