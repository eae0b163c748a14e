/**
 * What opens and clicks leave behind: the owner of `campaign_links`, `campaign_tracking`,
 * `campaign_tracking_hours`, `tracking_recipients` and `tracking_hits` (migration 0024).
 *
 * One open or click is one transaction: the detail row (kept 90 days), the counters (kept for
 * ever), the first-per-contact marker whose primary key (campaign, address) makes `email.opened`
 * and `email.clicked` fire once per contact and campaign, the event itself (outbox) and the
 * contact's engagement fact. A machine open (machine-opens.ts) counts in `opens_total` only: no
 * marker, no event, no engagement fact. A click is never an open.
 *
 * The delivery is read with its message (a read model over the queue: the address, the account
 * and key the events go to, and that the message is this campaign's), so a token for a delivery
 * that is not a campaign's records nothing: transactional mail is never tracked.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { pruneOpensAndClicks, recordFact } from "../contacts/engagement.ts"
import { emitEvent } from "../../events/outbox.ts"
import { EmailClicked, EmailOpened } from "../../events/schema.ts"
import type { ClickTarget, OpenTarget } from "./tokens.ts"

/** Per-recipient detail is kept this long (spec "Tracking detail retention"; analytics' detail_window_days). */
export const DETAIL_WINDOW_DAYS = 90
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000

interface DeliveryRow {
  readonly recipient: string
  readonly account_id: string
  readonly key_id: string
  readonly message_id: string
}

/** The campaign's delivery `target` names, if there is one. */
const campaignDelivery = (target: OpenTarget) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<DeliveryRow>`SELECT d.recipient, m.account_id, m.key_id, m.id AS message_id
      FROM deliveries d JOIN messages m ON m.id = d.message_id
      WHERE d.id = ${target.deliveryId} AND m.origin = 'campaign' AND m.campaign_id = ${target.campaignId}`
  ).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS)

/**
 * The campaign's tracked links (index → URL, as `rewriteForTracking` returned them), written when
 * its content is frozen. Called again for the same campaign (a resumed freeze), it keeps the first.
 */
export const recordCampaignLinks = (campaignId: string, links: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    links.length === 0
      ? Effect.void
      : sql`INSERT INTO campaign_links ${sql.insert(links.map((url, i) => ({ campaign_id: campaignId, link_index: i, url })))}
          ON CONFLICT DO NOTHING`
  ).pipe(Effect.asVoid)

/** The URL of link `linkIndex` of the campaign, if the campaign has it. */
export const linkUrl = (campaignId: string, linkIndex: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ url: string }>`SELECT url FROM campaign_links WHERE campaign_id = ${campaignId} AND link_index = ${linkIndex}`
  ).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => r.url)))

/** A campaign's tracking, when the campaign itself is deleted (its analytics go with it). */
export const deleteCampaignTracking = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`DELETE FROM tracking_hits WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM tracking_recipients WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_tracking_hours WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_tracking WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_links WHERE campaign_id = ${campaignId}`
    })))

/** The detail row and every counter an open or a click moves, in one statement. */
const countHit = (
  hit: { readonly campaignId: string; readonly deliveryId: string; readonly at: Date; readonly machine: boolean },
  kind: { readonly open: true; readonly first: boolean } | { readonly open: false; readonly first: boolean; readonly linkIndex: number; readonly firstOfLink: boolean }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const one = (b: boolean) => (b ? 1 : 0)
    const opens = one(kind.open)
    const clicks = one(!kind.open)
    const linkIndex = kind.open ? null : kind.linkIndex
    const link = kind.open
      ? sql`SELECT 1`
      : sql`UPDATE campaign_links SET clicks_total = clicks_total + 1, clicks_unique = clicks_unique + ${one(kind.firstOfLink)}
          WHERE campaign_id = ${hit.campaignId} AND link_index = ${kind.linkIndex}`
    return sql`WITH detail AS (
        INSERT INTO tracking_hits (campaign_id, delivery_id, kind, link_index, machine, at)
        VALUES (${hit.campaignId}, ${hit.deliveryId}, ${kind.open ? "open" : "click"}, ${linkIndex}, ${hit.machine}, ${hit.at})
      ), link AS (${link}), hours AS (
        INSERT INTO campaign_tracking_hours (campaign_id, hour, opens, clicks) VALUES (${hit.campaignId}, ${hourOf(hit.at)}, ${opens}, ${clicks})
        ON CONFLICT (campaign_id, hour) DO UPDATE SET opens = campaign_tracking_hours.opens + EXCLUDED.opens,
          clicks = campaign_tracking_hours.clicks + EXCLUDED.clicks
      )
      INSERT INTO campaign_tracking (campaign_id, opens_total, opens_unique, opens_machine, clicks_total, clicks_unique)
      VALUES (${hit.campaignId}, ${opens}, ${one(kind.open && kind.first)}, ${one(kind.open && hit.machine)}, ${clicks},
        ${one(!kind.open && kind.first)})
      ON CONFLICT (campaign_id) DO UPDATE SET
        opens_total = campaign_tracking.opens_total + EXCLUDED.opens_total,
        opens_unique = campaign_tracking.opens_unique + EXCLUDED.opens_unique,
        opens_machine = campaign_tracking.opens_machine + EXCLUDED.opens_machine,
        clicks_total = campaign_tracking.clicks_total + EXCLUDED.clicks_total,
        clicks_unique = campaign_tracking.clicks_unique + EXCLUDED.clicks_unique`
  })

export type OpenOutcome = "first" | "again" | "machine" | "unknown_delivery"

/** One load of the pixel of `target`'s message at `at`, in its own transaction. */
export const recordOpen = (target: OpenTarget, at: Date, machine: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(openHit(target, at, machine)))

/** What `recordOpen` writes, in the caller's transaction (the recorder's group, recorder.ts). */
export const openHit = (target: OpenTarget, at: Date, machine: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const found = yield* campaignDelivery(target)
      if (Option.isNone(found)) return "unknown_delivery" as OpenOutcome
      const d = found.value
      const email = d.recipient.toLowerCase()
      let first = false
      if (!machine) {
        // Inserted, or turned opened: this is the contact's first (human) open of the campaign.
        const marked = yield* sql`INSERT INTO tracking_recipients (campaign_id, email, delivery_id, opened, first_opened_at)
          VALUES (${target.campaignId}, ${email}, ${target.deliveryId}, true, ${at})
          ON CONFLICT (campaign_id, email) DO UPDATE SET opened = true, first_opened_at = EXCLUDED.first_opened_at
          WHERE NOT tracking_recipients.opened
          RETURNING 1`
        first = marked.length > 0
      }
      if (!machine) {
        yield* recordFact("opened", { accountId: d.account_id, keyId: d.key_id, email, at, campaignId: target.campaignId, messageId: d.message_id })
      }
      if (first) {
        yield* emitEvent({
          accountId: d.account_id,
          keyId: d.key_id,
          event: EmailOpened.make({ campaign_id: target.campaignId, email: d.recipient }),
          at
        })
      }
      // Last: the campaign's counter rows are the same rows for every hit, locked until the commit.
      yield* countHit({ campaignId: target.campaignId, deliveryId: target.deliveryId, at, machine }, { open: true, first })
      return (machine ? "machine" : first ? "first" : "again") as OpenOutcome
    }))

/**
 * One click on link `target.linkIndex` at `at`: the URL to send the browser to, or none when the
 * campaign has no such link. A delivery that is not on record (any more) still gets its URL; only
 * nothing is recorded.
 */
export const recordClick = (target: ClickTarget, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(clickHit(target, at)))

/** What `recordClick` writes, in the caller's transaction (the recorder's group, recorder.ts). */
export const clickHit = (target: ClickTarget, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const url = yield* linkUrl(target.campaignId, target.linkIndex)
      if (Option.isNone(url)) return url
      const found = yield* campaignDelivery(target)
      if (Option.isNone(found)) return url
      const d = found.value
      const email = d.recipient.toLowerCase()
      const { campaignId, linkIndex } = target
      yield* sql`INSERT INTO tracking_recipients (campaign_id, email, delivery_id) VALUES (${campaignId}, ${email}, ${target.deliveryId})
        ON CONFLICT DO NOTHING`
      // The row as it was before this click (locked: a concurrent click of the contact waits and then sees this one).
      const [marks] = yield* sql<{ first_click: boolean; first_of_link: boolean }>`
        WITH before AS (
          SELECT clicked_links FROM tracking_recipients WHERE campaign_id = ${campaignId} AND email = ${email} FOR UPDATE
        )
        UPDATE tracking_recipients r SET
          clicked_links = CASE WHEN ${linkIndex} = ANY (before.clicked_links) THEN before.clicked_links
            ELSE before.clicked_links || ${linkIndex}::integer END,
          first_clicked_at = CASE WHEN cardinality(before.clicked_links) = 0 THEN ${at} ELSE r.first_clicked_at END
        FROM before WHERE r.campaign_id = ${campaignId} AND r.email = ${email}
        RETURNING cardinality(before.clicked_links) = 0 AS first_click, NOT (${linkIndex} = ANY (before.clicked_links)) AS first_of_link`
      const first = marks?.first_click === true
      yield* recordFact("clicked", {
        accountId: d.account_id,
        keyId: d.key_id,
        email,
        at,
        campaignId,
        messageId: d.message_id,
        detail: url.value
      })
      if (first) {
        yield* emitEvent({
          accountId: d.account_id,
          keyId: d.key_id,
          event: EmailClicked.make({ campaign_id: campaignId, email: d.recipient, url: url.value }),
          at
        })
      }
      // Last: the campaign's counter rows are the same rows for every hit, locked until the commit.
      yield* countHit(
        { campaignId, deliveryId: target.deliveryId, at, machine: false },
        { open: false, first, linkIndex, firstOfLink: marks?.first_of_link === true }
      )
      return url
    }))

/**
 * Forgets the per-recipient detail older than DETAIL_WINDOW_DAYS at `now`: the opens and clicks
 * themselves, the first-open and first-click times, the contacts' open and click facts. The
 * counters, the hourly timeline and the first-per-contact markers stay, so the counts stay right
 * and a late open is not "first" again.
 */
export const pruneTrackingDetail = (now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const before = new Date(now.getTime() - DETAIL_WINDOW_DAYS * DAY_MS)
      const [gone] = yield* sql<{ n: number }>`WITH gone AS (DELETE FROM tracking_hits WHERE at < ${before} RETURNING 1)
        SELECT count(*)::integer AS n FROM gone`
      yield* sql`UPDATE tracking_recipients SET first_opened_at = NULL WHERE first_opened_at < ${before}`
      yield* sql`UPDATE tracking_recipients SET first_clicked_at = NULL WHERE first_clicked_at < ${before}`
      yield* pruneOpensAndClicks(before)
      return { before, hits: gone?.n ?? 0 }
    }))
