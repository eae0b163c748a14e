/**
 * Everything POST /v1/mail/send must know before it can answer, read in ONE round trip: the key's
 * rate window (counted by the same statement), the account's limits, the sender domain's state, and
 * which recipients are suppressed or on a blocked domain.
 *
 * Why one statement: a round trip to PostgreSQL costs about 0.3 ms of this process's CPU (socket
 * write, result parsing, a pool checkout), and the send path used to make six of them before its
 * writes (bench/accept.ts). The rules stay where they live — limitsFrom/toLimits (AccountLimits),
 * countRequest/decideRate (RateLimiter), sendingAllowed (domain records) — this file only joins
 * their reads.
 *
 * The rate window is counted for every request, valid or not (the spec's 429 comes before any
 * body check); the sender part is read only for a body that passed validation.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { domainOf } from "../lib/email.ts"
import { sendingAllowed } from "../platform/domains/records.ts"
import type { SuppressionReason } from "../platform/suppressions/Suppressions.ts"
import { AccountLimits, AccountMissing, type Limits, limitsFrom, type LimitsRow, toLimits } from "../platform/usage/AccountLimits.ts"
import { countRequest, decideRate, type RateDecision, type RateWindow } from "../platform/usage/RateLimiter.ts"

/** What acceptance reads about the sender and the recipients of a valid body. */
export interface SenderFacts {
  /** The sender domain's state for sending now. */
  readonly domainState: "ok" | "not_registered" | "unverified" | "grace_expired"
  /** Suppressed recipients (lower case) and why. */
  readonly suppressed: ReadonlyMap<string, SuppressionReason>
  /** Recipient domains on the platform block list. */
  readonly blockedDomains: ReadonlySet<string>
}

export interface SendContextOf {
  readonly rate: RateDecision
  readonly limits: Limits
  /** Present when the request asked about a sender (a valid body). */
  readonly sender: SenderFacts | undefined
}

export interface SenderQuestion {
  readonly fromEmail: string
  /** Every recipient address of the request, lower case, de-duplicated. */
  readonly recipients: ReadonlyArray<string>
}

interface Row extends RateWindow, LimitsRow {
  readonly domain_registered: boolean | null
  readonly domain_verified_at: Date | null
  readonly domain_verification_lost_at: Date | null
  readonly suppressed: ReadonlyArray<{ readonly email: string; readonly reason: SuppressionReason }> | null
  readonly blocked: ReadonlyArray<string> | null
}

export class SendContext extends Effect.Service<SendContext>()("herald/SendContext", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { catalog } = yield* AccountLimits
    const { domainGraceHours } = yield* AppConfig

    const senderColumns = (accountId: string, question: SenderQuestion) => {
      const domains = [...new Set(question.recipients.map(domainOf))]
      return sql`
        d.account_id IS NOT NULL AS domain_registered,
        d.verified_at AS domain_verified_at,
        d.verification_lost_at AS domain_verification_lost_at,
        (SELECT json_agg(json_build_object('email', s.email, 'reason', s.reason)) FROM suppressions s
          WHERE s.email = ANY(${question.recipients}) AND (s.account_id = ${accountId} OR s.account_id IS NULL)) AS suppressed,
        ARRAY(SELECT b.domain FROM blocked_domains b WHERE b.domain = ANY(${domains})) AS blocked`
    }

    const read = (keyId: string, accountId: string, now: Date, question: SenderQuestion | undefined) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`
          WITH hit AS (${countRequest(sql, keyId, now)})
          SELECT hit.window_start, hit.count, l.*
            ${question === undefined ? sql`` : sql`, ${senderColumns(accountId, question)}`}
          FROM hit
          CROSS JOIN ${limitsFrom(sql, accountId)}
          ${
          question === undefined ? sql`` : sql`LEFT JOIN domains d
            ON d.account_id = ${accountId} AND d.domain = ${domainOf(question.fromEmail).toLowerCase()}`
        }`
        const row = rows[0]
        if (row === undefined) return yield* new AccountMissing({ accountId })
        const limits = toLimits(accountId, row, catalog, now)
        const context: SendContextOf = {
          rate: decideRate(row, limits.ratePerMin),
          limits,
          sender: question === undefined ? undefined : {
            domainState: row.domain_registered !== true ? "not_registered" : sendingAllowed(
              { verifiedAt: row.domain_verified_at, verificationLostAt: row.domain_verification_lost_at },
              now,
              domainGraceHours
            ),
            suppressed: new Map((row.suppressed ?? []).map((s) => [s.email, s.reason])),
            blockedDomains: new Set(row.blocked ?? [])
          }
        }
        return context
      })

    return { read } as const
  })
}) {}
