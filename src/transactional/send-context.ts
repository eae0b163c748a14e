/**
 * Everything POST /v1/mail/send must know before it can answer, read in ONE round trip: the key's
 * and the account's rate windows (counted by the same statement), the account's limits, the sender
 * domain's state, and which recipients are suppressed or on a blocked domain.
 *
 * Why one statement: a round trip to PostgreSQL costs about 0.3 ms of this process's CPU (socket
 * write, result parsing, a pool checkout), and the send path used to make six of them before its
 * writes (bench/accept.ts). For the same reason, requests that arrive together are read together
 * (group commit, src/lib/group-commit.ts): one statement per group, not per request. The rules
 * stay where they live — limitsFrom/toLimits (AccountLimits), countRequests/decideRate/tighterOf
 * (RateLimiter), sendingAllowed (domain records) — this file only joins their reads.
 *
 * The rate windows are counted for every request, valid or not (the spec's 429 comes before any
 * body check); the sender part is read only for a body that passed validation.
 * Within a group, each key's and each account's requests take the places of their window in the
 * group's order, so sends that arrive together are counted exactly, as if they came one by one.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Either } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { domainOf } from "../lib/email.ts"
import { makeGroupCommit } from "../lib/group-commit.ts"
import { sendingAllowed } from "../platform/domains/records.ts"
import type { SuppressionReason } from "../platform/suppressions/Suppressions.ts"
import { AccountLimits, AccountMissing, type Limits, limitsFrom, type LimitsRow, toLimits } from "../platform/usage/AccountLimits.ts"
import { setResponseHeaders } from "../http/request-context.ts"
import { countRequests, decideRate, type RateDecision, rateLimitHeaders, type RateWindow, tighterOf } from "../platform/usage/RateLimiter.ts"

/** A bulk call that produces mail (test-send, campaign send, enrolment) found the key's per-minute window full. */
export class MailRateLimited extends Data.TaggedError("MailRateLimited")<{ readonly limit: number; readonly reset: number }> {}

/** What acceptance reads about the sender and the recipients of a valid body. */
export interface SenderFacts {
  /** The sender domain's state for sending now. */
  readonly domainState: "ok" | "not_registered" | "unverified" | "grace_expired"
  /** Suppressed recipients (lower case) and why. */
  readonly suppressed: ReadonlyMap<string, SuppressionReason>
  /** Recipient domains on the platform block list. */
  readonly blockedDomains: ReadonlySet<string>
}

/** The columns a `req` row's sender facts come in (this file's statement and submission/sender-facts.ts's). */
export interface SenderFactsRow {
  readonly domain_registered: boolean | null
  readonly domain_verified_at: Date | null
  readonly domain_verification_lost_at: Date | null
  readonly suppressed: ReadonlyArray<{ readonly email: string; readonly reason: SuppressionReason }> | null
  readonly blocked: ReadonlyArray<string> | null
}

/**
 * The sender facts of each row of a CTE `req` (account_id, from_domain, recipients text[],
 * domains text[]), joined as `d`: the columns, then the join. Constant texts, so the statements
 * that use them stay named (src/db/prepared.ts).
 */
export const SENDER_FACTS_COLUMNS = `d.account_id IS NOT NULL AS domain_registered,
  d.verified_at AS domain_verified_at,
  d.verification_lost_at AS domain_verification_lost_at,
  (SELECT json_agg(json_build_object('email', s.email, 'reason', s.reason)) FROM suppressions s
    WHERE s.email = ANY(req.recipients) AND (s.account_id = req.account_id OR s.account_id IS NULL)) AS suppressed,
  ARRAY(SELECT b.domain FROM blocked_domains b WHERE b.domain = ANY(req.domains)) AS blocked`
export const SENDER_DOMAIN_JOIN = "LEFT JOIN domains d ON d.account_id = req.account_id AND d.domain = req.from_domain"

/** A row's facts as acceptance reads them, the domain's grace counted from `now`. */
export const senderFactsOf = (row: SenderFactsRow | undefined, now: Date, graceHours: number): SenderFacts => ({
  domainState: row?.domain_registered !== true ? "not_registered" : sendingAllowed(
    { verifiedAt: row.domain_verified_at, verificationLostAt: row.domain_verification_lost_at },
    now,
    graceHours
  ),
  suppressed: new Map((row?.suppressed ?? []).map((s) => [s.email, s.reason])),
  blockedDomains: new Set(row?.blocked ?? [])
})

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

interface Row extends RateWindow, LimitsRow, SenderFactsRow {
  /** The account's window (RateWindow's own fields are the key's). */
  readonly account_window_start: Date
  readonly account_count: number
}

interface Question {
  readonly keyId: string
  readonly accountId: string
  readonly now: Date
  readonly sender: SenderQuestion | undefined
}

/** Requests per group: one statement reads them all. */
const GROUP_REQUESTS = 64

export class SendContext extends Effect.Service<SendContext>()("herald/SendContext", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { catalog } = yield* AccountLimits
    const { domainGraceHours } = yield* AppConfig

    /**
     * One statement for a group of requests: each key's and each account's window counted once for
     * all its requests, and per request its account's limits, sender domain, suppressed and blocked
     * recipients. The requests travel as one JSON parameter (`req`), so the statement's text does not
     * grow with them.
     */
    const readGroup = (group: ReadonlyArray<Question>) =>
      Effect.gen(function*() {
        // Per holder (key or account), its requests in this group; per request, its place among them.
        const perHolder = new Map<string, number>()
        const take = (holderId: string) => {
          const n = (perHolder.get(holderId) ?? 0) + 1
          perHolder.set(holderId, n)
          return n
        }
        const keyRank = group.map((q) => take(q.keyId))
        const accountRank = group.map((q) => take(q.accountId))
        const requests = group.map((q, i) => ({
          i,
          key_id: q.keyId,
          account_id: q.accountId,
          from_domain: q.sender === undefined ? null : domainOf(q.sender.fromEmail).toLowerCase(),
          recipients: q.sender?.recipients ?? null,
          domains: q.sender === undefined ? null : [...new Set(q.sender.recipients.map(domainOf))]
        }))
        const now = new Date(Math.max(...group.map((q) => q.now.getTime())))
        // Prepared (src/db/prepared.ts): planning this statement cost several times running it.
        const rows = yield* sql<Row & { readonly i: number }>`/* herald:prepared */
          WITH req AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(requests)}::jsonb)
              AS r(i integer, key_id text, account_id text, from_domain text, recipients text[], domains text[])
          ), hit AS (${countRequests(sql, [...perHolder], now)})
          SELECT req.i, key_hit.window_start, key_hit.count,
            account_hit.window_start AS account_window_start, account_hit.count AS account_count, l.*,
            ${sql.literal(SENDER_FACTS_COLUMNS)}
          FROM req
          JOIN hit key_hit ON key_hit.key_id = req.key_id
          JOIN hit account_hit ON account_hit.key_id = req.account_id
          CROSS JOIN LATERAL ${limitsFrom(sql, sql`req.account_id`)}
          ${sql.literal(SENDER_DOMAIN_JOIN)}`
        const byIndex = new Map(rows.map((row) => [row.i, row]))
        return group.map((q, i): Either.Either<SendContextOf, AccountMissing> => {
          const row = byIndex.get(i)
          if (row === undefined) return Either.left(new AccountMissing({ accountId: q.accountId }))
          const limits = toLimits(q.accountId, row, catalog, q.now)
          // The n-th request of its key (of its account) made that window's count this.
          const keyCount = row.count - perHolder.get(q.keyId)! + keyRank[i]!
          const accountCount = row.account_count - perHolder.get(q.accountId)! + accountRank[i]!
          return Either.right({
            rate: tighterOf(
              decideRate({ window_start: row.window_start, count: keyCount }, limits.ratePerMin),
              decideRate({ window_start: row.account_window_start, count: accountCount }, limits.ratePerMin)
            ),
            limits,
            sender: q.sender === undefined ? undefined : senderFactsOf(row, q.now, domainGraceHours)
          })
        })
      })

    const group = yield* makeGroupCommit({ write: readGroup, maxItems: GROUP_REQUESTS })

    /** The request's context; `sender` only for a valid body (its sender and recipients are asked about). */
    const read = (keyId: string, accountId: string, now: Date, sender: SenderQuestion | undefined) =>
      Effect.flatMap(group.submit({ keyId, accountId, now, sender }), (context) => context)

    /**
     * `read` for the bulk calls that produce mail (DESIGN: they count in the sends' window): the
     * RateLimit headers set, and MailRateLimited when the window is full.
     */
    const admit = (keyId: string, accountId: string, now: Date, sender: SenderQuestion | undefined) =>
      Effect.gen(function*() {
        const context = yield* read(keyId, accountId, now, sender)
        yield* setResponseHeaders(rateLimitHeaders(context.rate))
        if (!context.rate.allowed) return yield* new MailRateLimited({ limit: context.limits.ratePerMin, reset: context.rate.reset })
        return context
      })

    return { read, admit } as const
  })
}) {}
