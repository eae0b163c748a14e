/**
 * What opens and clicks leave behind: the owner of `campaign_links`, `campaign_tracking`,
 * `campaign_tracking_hours`, `tracking_recipients` and `tracking_hits` (migration 0024).
 *
 * The endpoints only log a hit (ingest.ts); the `tracking-aggregator` actor takes batches of them
 * out of the log and counts them here (`foldHits`), one transaction per batch: the detail row (kept
 * 90 days), the counters (kept for ever), the first-per-contact marker, the event (outbox) and the
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
import { dropCampaignHits, type LoggedHit } from "./ingest.ts"

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

/** Every link of the campaign, index → URL (none yet: its content is not frozen, or it is gone). */
export const campaignLinkUrls = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ link_index: number; url: string }>`SELECT link_index, url FROM campaign_links WHERE campaign_id = ${campaignId}`
  ).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.link_index, r.url]))))

/** A campaign's tracking, when the campaign itself is deleted (its analytics go with it). */
export const deleteCampaignTracking = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* dropCampaignHits(campaignId)
      yield* sql`DELETE FROM tracking_hits WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM tracking_recipients WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_tracking_hours WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_tracking WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_links WHERE campaign_id = ${campaignId}`
    })))

interface CampaignCounts {
  opens_total: number
  opens_unique: number
  opens_machine: number
  clicks_total: number
  clicks_unique: number
}

/** What one batch adds to the counter rows, summed in memory and written once per row. */
class BatchCounts {
  readonly campaigns = new Map<string, CampaignCounts>()
  readonly hours = new Map<string, { campaign_id: string; hour: Date; opens: number; clicks: number }>()
  readonly links = new Map<string, { campaign_id: string; link_index: number; total: number; unique: number }>()
  readonly details: Array<Record<string, unknown>> = []

  add(hit: LoggedHit, first: boolean, firstOfLink: boolean) {
    const open = hit.linkIndex === null
    const one = (b: boolean) => (b ? 1 : 0)
    const c = this.campaigns.get(hit.campaignId) ?? { opens_total: 0, opens_unique: 0, opens_machine: 0, clicks_total: 0, clicks_unique: 0 }
    c.opens_total += one(open)
    c.opens_unique += one(open && first)
    c.opens_machine += one(open && hit.machine)
    c.clicks_total += one(!open)
    c.clicks_unique += one(!open && first)
    this.campaigns.set(hit.campaignId, c)
    const hour = hourOf(hit.at)
    const hourKey = `${hit.campaignId} ${hour.getTime()}`
    const h = this.hours.get(hourKey) ?? { campaign_id: hit.campaignId, hour, opens: 0, clicks: 0 }
    h.opens += one(open)
    h.clicks += one(!open)
    this.hours.set(hourKey, h)
    if (hit.linkIndex !== null) {
      const linkKey = `${hit.campaignId} ${hit.linkIndex}`
      const l = this.links.get(linkKey) ?? { campaign_id: hit.campaignId, link_index: hit.linkIndex, total: 0, unique: 0 }
      l.total += 1
      l.unique += one(firstOfLink)
      this.links.set(linkKey, l)
    }
    this.details.push({
      campaign_id: hit.campaignId,
      delivery_id: hit.deliveryId,
      kind: open ? "open" : "click",
      link_index: hit.linkIndex,
      machine: hit.machine,
      at: hit.at
    })
  }
}

/** The first-open marker of `hit`'s contact: true when this (human) open is the contact's first of the campaign. */
const markOpen = (hit: LoggedHit, email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO tracking_recipients (campaign_id, email, delivery_id, opened, first_opened_at)
      VALUES (${hit.campaignId}, ${email}, ${hit.deliveryId}, true, ${hit.at})
      ON CONFLICT (campaign_id, email) DO UPDATE SET opened = true, first_opened_at = EXCLUDED.first_opened_at
      WHERE NOT tracking_recipients.opened
      RETURNING 1`
  ).pipe(Effect.map((rows) => rows.length > 0))

/** The click markers of `hit`'s contact: is this its first click of the campaign, its first of this link? */
const markClick = (hit: LoggedHit & { readonly linkIndex: number }, email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const { campaignId, linkIndex, at } = hit
      yield* sql`INSERT INTO tracking_recipients (campaign_id, email, delivery_id) VALUES (${campaignId}, ${email}, ${hit.deliveryId})
        ON CONFLICT DO NOTHING`
      // The row as it was before this click (locked: a concurrent fold of the contact waits and then sees this one).
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
      return { first: marks?.first_click === true, firstOfLink: marks?.first_of_link === true }
    }))

/** The deliveries `hits` name that are campaign deliveries, by id (a read model over the queue). */
const campaignDeliveries = (hits: ReadonlyArray<LoggedHit>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<DeliveryRow & { id: string; campaign_id: string }>`SELECT d.id, d.recipient, m.account_id, m.key_id, m.id AS message_id, m.campaign_id
      FROM deliveries d JOIN messages m ON m.id = d.message_id
      WHERE d.id IN ${sql.in([...new Set(hits.map((h) => h.deliveryId))])} AND m.origin = 'campaign'`
  ).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.id, r]))))

/** The URLs of the links `hits` click, by "campaign index". */
const clickedLinks = (hits: ReadonlyArray<LoggedHit>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const campaigns = [...new Set(hits.filter((h) => h.linkIndex !== null).map((h) => h.campaignId))]
    return campaigns.length === 0
      ? Effect.succeed(new Map<string, string>())
      : sql<{ campaign_id: string; link_index: number; url: string }>`SELECT campaign_id, link_index, url FROM campaign_links
          WHERE campaign_id IN ${sql.in(campaigns)}`.pipe(
          Effect.map((rows) => new Map(rows.map((r) => [`${r.campaign_id} ${r.link_index}`, r.url])))
        )
  })

/**
 * Counts `hits` (taken from the log, ingest.ts), in the caller's transaction, each exactly as it
 * would have counted alone: the detail row, the counters, the first-per-contact marker whose primary
 * key (campaign, address) makes `email.opened` and `email.clicked` fire once per contact and
 * campaign, the event (outbox) and the contact's engagement fact (also the message's timeline). A
 * machine open counts in `opens_total` and `opens_machine` only. A click is never an open. A hit
 * whose delivery is not its campaign's (transactional mail, a deleted delivery) or whose link the
 * campaign does not have is dropped.
 *
 * Lock order, so that two replicas' batches never deadlock: the markers by (campaign, delivery),
 * then the counter rows by key. Within a delivery the hits keep their log order (the first open is
 * the earliest).
 */
export const foldHits = (hits: ReadonlyArray<LoggedHit>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      if (hits.length === 0) return 0
      const deliveries = yield* campaignDeliveries(hits)
      const urls = yield* clickedLinks(hits)
      const byContact = hits.map((hit, order) => ({ hit, order })).sort((a, b) =>
        a.hit.campaignId < b.hit.campaignId ? -1 : a.hit.campaignId > b.hit.campaignId ? 1
        : a.hit.deliveryId < b.hit.deliveryId ? -1 : a.hit.deliveryId > b.hit.deliveryId ? 1 : a.order - b.order)
      const counts = new BatchCounts()
      for (const { hit } of byContact) {
        const d = deliveries.get(hit.deliveryId)
        if (d === undefined || d.campaign_id !== hit.campaignId) continue
        const email = d.recipient.toLowerCase()
        const fact = { accountId: d.account_id, keyId: d.key_id, email, at: hit.at, campaignId: hit.campaignId, messageId: d.message_id }
        if (hit.linkIndex === null) {
          const first = hit.machine ? false : yield* markOpen(hit, email)
          if (!hit.machine) yield* recordFact("opened", fact)
          if (first) {
            yield* emitEvent({ accountId: d.account_id, keyId: d.key_id, event: EmailOpened.make({ campaign_id: hit.campaignId, email: d.recipient }), at: hit.at })
          }
          counts.add(hit, first, false)
        } else {
          const url = urls.get(`${hit.campaignId} ${hit.linkIndex}`)
          if (url === undefined) continue
          const marks = yield* markClick({ ...hit, linkIndex: hit.linkIndex }, email)
          yield* recordFact("clicked", { ...fact, detail: url })
          if (marks.first) {
            yield* emitEvent({
              accountId: d.account_id,
              keyId: d.key_id,
              event: EmailClicked.make({ campaign_id: hit.campaignId, email: d.recipient, url }),
              at: hit.at
            })
          }
          counts.add(hit, marks.first, marks.firstOfLink)
        }
      }
      if (counts.details.length === 0) return 0
      yield* sql`INSERT INTO tracking_hits ${sql.insert(counts.details)}`
      for (const l of [...counts.links.values()].sort((a, b) => a.campaign_id.localeCompare(b.campaign_id) || a.link_index - b.link_index)) {
        yield* sql`UPDATE campaign_links SET clicks_total = clicks_total + ${l.total}, clicks_unique = clicks_unique + ${l.unique}
          WHERE campaign_id = ${l.campaign_id} AND link_index = ${l.link_index}`
      }
      const hours = [...counts.hours.values()].sort((a, b) => a.campaign_id.localeCompare(b.campaign_id) || a.hour.getTime() - b.hour.getTime())
      yield* sql`INSERT INTO campaign_tracking_hours ${sql.insert(hours)}
        ON CONFLICT (campaign_id, hour) DO UPDATE SET opens = campaign_tracking_hours.opens + EXCLUDED.opens,
          clicks = campaign_tracking_hours.clicks + EXCLUDED.clicks`
      const campaigns = [...counts.campaigns.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([campaign_id, c]) => ({ campaign_id, ...c }))
      yield* sql`INSERT INTO campaign_tracking ${sql.insert(campaigns)}
        ON CONFLICT (campaign_id) DO UPDATE SET
          opens_total = campaign_tracking.opens_total + EXCLUDED.opens_total,
          opens_unique = campaign_tracking.opens_unique + EXCLUDED.opens_unique,
          opens_machine = campaign_tracking.opens_machine + EXCLUDED.opens_machine,
          clicks_total = campaign_tracking.clicks_total + EXCLUDED.clicks_total,
          clicks_unique = campaign_tracking.clicks_unique + EXCLUDED.clicks_unique`
      return counts.details.length
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
