/**
 * What the end of DATA must know about the sender and the recipients — the sender domain's state,
 * the suppressed recipients, the recipient domains on the block list — in ONE statement. Through
 * accept.ts's `senderFacts` it was three, one after the other, each a pool checkout, a socket
 * write and a result to parse (send-context.ts says what a round trip costs): the largest share of
 * a submission's own CPU in bench:submission. The conditions are send-context.ts's (which reads
 * the same with the rate window, for the HTTP send); here the window was counted at MAIL already.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { domainOf } from "../../lib/email.ts"
import { sendingAllowed } from "../../platform/domains/records.ts"
import type { SuppressionReason } from "../../platform/suppressions/Suppressions.ts"
import type { SenderFacts } from "../send-context.ts"

interface Row {
  readonly domain_registered: boolean
  readonly domain_verified_at: Date | null
  readonly domain_verification_lost_at: Date | null
  readonly suppressed: ReadonlyArray<{ readonly email: string; readonly reason: SuppressionReason }> | null
  readonly blocked: ReadonlyArray<string> | null
}

/** `recipients`: lower case, de-duplicated. */
export const readSenderFacts = (accountId: string, fromEmail: string, recipients: ReadonlyArray<string>, now: Date, graceHours: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const domains = [...new Set(recipients.map(domainOf))]
    const [row] = yield* sql<Row>`
      SELECT d.account_id IS NOT NULL AS domain_registered,
        d.verified_at AS domain_verified_at,
        d.verification_lost_at AS domain_verification_lost_at,
        (SELECT json_agg(json_build_object('email', s.email, 'reason', s.reason)) FROM suppressions s
          WHERE s.email IN (SELECT jsonb_array_elements_text(${JSON.stringify(recipients)}::jsonb))
            AND (s.account_id = ${accountId} OR s.account_id IS NULL)) AS suppressed,
        ARRAY(SELECT b.domain FROM blocked_domains b
          WHERE b.domain IN (SELECT jsonb_array_elements_text(${JSON.stringify(domains)}::jsonb))) AS blocked
      FROM (SELECT 1) AS one
      LEFT JOIN domains d ON d.account_id = ${accountId} AND d.domain = ${domainOf(fromEmail).toLowerCase()}`
    return {
      domainState: row?.domain_registered !== true ? "not_registered" : sendingAllowed(
        { verifiedAt: row.domain_verified_at, verificationLostAt: row.domain_verification_lost_at },
        now,
        graceHours
      ),
      suppressed: new Map((row?.suppressed ?? []).map((s) => [s.email, s.reason])),
      blockedDomains: new Set(row?.blocked ?? [])
    } satisfies SenderFacts
  })
