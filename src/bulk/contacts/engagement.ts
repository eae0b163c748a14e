/**
 * What happened to an address: the `contact_engagement` table's one writer, and the contact status
 * moves an address's facts cause (issue 19 "Contacts"). Bounces, complaints and unsubscribes are
 * facts of the address in the account, whatever the channel that learned them (the inbound DSN and
 * ARF processing, an unsubscribe): they are recorded once with no key, so every key's contact of
 * the address shows them, and they move every contact of the address in the account. The callers
 * run these inside the transaction that records the fact itself (no trigger: the owner writes).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type EngagementType = "opened" | "clicked" | "bounced" | "complained" | "unsubscribed"

export interface AddressFact {
  readonly accountId: string
  readonly email: string
  readonly at: Date
  readonly messageId?: string | null | undefined
  readonly detail?: string | null | undefined
  /** Opens and clicks only: the campaign's key (only that key's contacts show them). */
  readonly keyId?: string | null | undefined
  /**
   * The campaign the fact is about: an open's or a click's, and a complaint's or an unsubscribe's
   * when it came from a campaign's message (the campaign's analytics count those).
   */
  readonly campaignId?: string | null | undefined
  /** The sequence whose step's message an unsubscribe came from. */
  readonly sequenceId?: string | null | undefined
}

export const recordFact = (type: EngagementType, fact: AddressFact) => recordFacts([{ type, fact }])

/** Many facts in one statement (the tracking aggregator's batch of opens and clicks). */
export const recordFacts = (facts: ReadonlyArray<{ readonly type: EngagementType; readonly fact: AddressFact }>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    facts.length === 0 ? Effect.void : sql`INSERT INTO contact_engagement ${
      sql.insert(facts.map(({ type, fact }) => ({
        account_id: fact.accountId,
        key_id: fact.keyId ?? null,
        email: fact.email.toLowerCase(),
        type,
        at: fact.at,
        campaign_id: fact.campaignId ?? null,
        sequence_id: fact.sequenceId ?? null,
        message_id: fact.messageId ?? null,
        detail: fact.detail ?? null
      })))
    }`
  ).pipe(Effect.asVoid)

/**
 * Forgets the opens and clicks older than `before`: they are tracking detail, kept 90 days (DESIGN
 * "Analytics detail"; the tracking prune calls this). Bounces, complaints and unsubscribes stay.
 */
export const pruneOpensAndClicks = (before: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`DELETE FROM contact_engagement WHERE type IN ('opened', 'clicked') AND at < ${before}`
  ).pipe(Effect.asVoid)

/**
 * A bounce that failed the delivery for good. One that suppresses the address (a hard bounce with
 * a suppressing status, or the soft bounces that escalated) moves the account's `active` contacts
 * of it to `bounced`; an unsubscribed or complained contact keeps its stronger status.
 */
export const recordBounce = (fact: AddressFact & { readonly suppressing: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* recordFact("bounced", fact)
    if (!fact.suppressing) return
    yield* sql`UPDATE contacts SET status = 'bounced', updated_at = ${fact.at}
      WHERE account_id = ${fact.accountId} AND lower(email) = ${fact.email.toLowerCase()} AND status = 'active'`
  })

/** A complaint (abuse, fraud, virus): every contact of the address in the account not unsubscribed becomes `complained`. */
export const recordComplaint = (fact: AddressFact) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* recordFact("complained", fact)
    yield* sql`UPDATE contacts SET status = 'complained', updated_at = ${fact.at}
      WHERE account_id = ${fact.accountId} AND lower(email) = ${fact.email.toLowerCase()} AND status IN ('active', 'bounced')`
  })

export interface EngagementItem {
  readonly type: EngagementType
  readonly at: string
  readonly campaign_id?: string
  readonly sequence_id?: string
  readonly message_id?: string
  readonly detail?: string
}

interface Row {
  readonly type: EngagementType
  readonly at: Date
  readonly campaign_id: string | null
  readonly sequence_id: string | null
  readonly message_id: string | null
  readonly detail: string | null
}

const withoutNulls = (row: Row): EngagementItem => ({
  type: row.type,
  at: row.at.toISOString(),
  ...(row.campaign_id === null ? {} : { campaign_id: row.campaign_id }),
  ...(row.sequence_id === null ? {} : { sequence_id: row.sequence_id }),
  ...(row.message_id === null ? {} : { message_id: row.message_id }),
  ...(row.detail === null ? {} : { detail: row.detail })
})

/** The address's history as `keyId` sees it (the address's facts and its own campaigns'), newest first. */
export const engagementOf = (accountId: string, keyId: string, email: string, limit: number, offset: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const address = email.toLowerCase()
    const visible = sql`account_id = ${accountId} AND email = ${address} AND (key_id IS NULL OR key_id = ${keyId})`
    const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM contact_engagement WHERE ${visible}`
    const rows = yield* sql<Row>`SELECT type, at, campaign_id, sequence_id, message_id, detail FROM contact_engagement
      WHERE ${visible} ORDER BY at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`
    return { total: count?.total ?? 0, limit, offset, items: rows.map(withoutNulls) }
  })
