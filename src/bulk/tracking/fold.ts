/**
 * Counting a batch of logged hits (the `tracking-aggregator` actor's work, aggregator.ts): the
 * detail rows (kept 90 days), the counters (kept for ever), the first-per-contact markers, the
 * events (outbox) and the contacts' engagement facts, in the caller's transaction. The tables are
 * store.ts's; this is the statement plan that writes them.
 *
 * A batch costs a fixed dozen statements, whatever its size: every table is written with one
 * statement for all of the batch's rows, and the tokens' repeat windows (windows.ts) and the
 * markers are read (and locked) once, decided in memory hit by hit in log order, and written back
 * once. A statement per hit (the marker, the fact, the event) made counting slower than hits
 * arrive under load and took a fifth of the appliance's CPU from the tracking endpoints
 * (bench/campaign.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { campaignDeliveriesById } from "../../mta/queue/read-models/tracking-lookups.ts"
import { type AddressFact, type EngagementType, recordFacts } from "../contacts/engagement.ts"
import { emitEvents, type OutboxEntry } from "../../events/outbox.ts"
import { EmailClicked, EmailOpened } from "../../events/schema.ts"
import type { LoggedHit } from "./ingest.ts"
import { admit, lockWindows, saveWindows, windowOf } from "./windows.ts"

const HOUR_MS = 3_600_000

/** A contact's first-per-campaign markers (tracking_recipients), as read and as this batch moves them. */
interface Marker {
  readonly campaignId: string
  readonly email: string
  opened: boolean
  clicked: Array<number>
  firstOpenedAt: Date | null
  firstClickedAt: Date | null
  changed: boolean
}

const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS)
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The deliveries `hits` name that are campaign deliveries, by id (the queue's read model). */
const campaignDeliveries = (hits: ReadonlyArray<LoggedHit>) => campaignDeliveriesById(hits.map((h) => h.deliveryId))

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
 * The markers of `contacts` (campaign, address, the delivery that made the row), created where
 * missing and locked, in one statement: the no-op update of an existing row takes its lock and
 * returns it as it is. In (campaign, address) order — the one lock order of every aggregator, so
 * two replicas' batches never deadlock.
 */
const lockMarkers = (contacts: ReadonlyArray<{ readonly campaignId: string; readonly email: string; readonly deliveryId: string }>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ campaign_id: string; email: string; opened: boolean; clicked_links: Array<number> }>`
      INSERT INTO tracking_recipients (campaign_id, email, delivery_id)
      SELECT * FROM unnest(${contacts.map((c) => c.campaignId)}::text[], ${contacts.map((c) => c.email)}::text[],
        ${contacts.map((c) => c.deliveryId)}::text[])
      ON CONFLICT (campaign_id, email) DO UPDATE SET delivery_id = tracking_recipients.delivery_id
      RETURNING campaign_id, email, opened, clicked_links`
  ).pipe(Effect.map((rows) =>
    new Map(rows.map((r): [string, Marker] => [`${r.campaign_id} ${r.email}`, {
      campaignId: r.campaign_id,
      email: r.email,
      opened: r.opened,
      clicked: [...r.clicked_links],
      firstOpenedAt: null,
      firstClickedAt: null,
      changed: false
    }]))
  ))

/** Writes back the markers this batch moved (a first time is set only where it was unset). */
const saveMarkers = (markers: ReadonlyArray<Marker>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    markers.length === 0 ? Effect.void : sql`UPDATE tracking_recipients r SET opened = u.opened,
        first_opened_at = coalesce(u.first_opened_at, r.first_opened_at),
        clicked_links = u.clicked_links::integer[],
        first_clicked_at = coalesce(u.first_clicked_at, r.first_clicked_at)
      FROM unnest(${markers.map((m) => m.campaignId)}::text[], ${markers.map((m) => m.email)}::text[], ${markers.map((m) => m.opened)}::boolean[],
        ${markers.map((m) => m.firstOpenedAt)}::timestamptz[], ${markers.map((m) => `{${m.clicked.join(",")}}`)}::text[],
        ${markers.map((m) => m.firstClickedAt)}::timestamptz[]) AS u(campaign_id, email, opened, first_opened_at, clicked_links, first_clicked_at)
      WHERE r.campaign_id = u.campaign_id AND r.email = u.email`.pipe(Effect.asVoid))

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
  /** Hits counted (with or without their detail row). */
  counted = 0

  /** A counted hit; `detail`: it also leaves its detail row (windows.ts caps them per token). */
  add(hit: LoggedHit, first: boolean, firstOfLink: boolean, detail: boolean) {
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
    this.counted += 1
    if (detail) this.details.push({
      campaign_id: hit.campaignId,
      delivery_id: hit.deliveryId,
      kind: open ? "open" : "click",
      link_index: hit.linkIndex,
      machine: hit.machine,
      at: hit.at
    })
  }
}

/** The counter rows, each once, in key order (the lock order shared with every other aggregator). */
const writeCounts = (counts: BatchCounts) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      if (counts.details.length > 0) yield* sql`INSERT INTO tracking_hits ${sql.insert(counts.details)}`
      const links = [...counts.links.values()].sort((a, b) => byText(a.campaign_id, b.campaign_id) || a.link_index - b.link_index)
      if (links.length > 0) {
        yield* sql`UPDATE campaign_links l SET clicks_total = l.clicks_total + u.total, clicks_unique = l.clicks_unique + u.uniq
          FROM unnest(${links.map((l) => l.campaign_id)}::text[], ${links.map((l) => l.link_index)}::integer[],
            ${links.map((l) => l.total)}::integer[], ${links.map((l) => l.unique)}::integer[]) AS u(campaign_id, link_index, total, uniq)
          WHERE l.campaign_id = u.campaign_id AND l.link_index = u.link_index`
      }
      const hours = [...counts.hours.values()].sort((a, b) => byText(a.campaign_id, b.campaign_id) || a.hour.getTime() - b.hour.getTime())
      yield* sql`INSERT INTO campaign_tracking_hours ${sql.insert(hours)}
        ON CONFLICT (campaign_id, hour) DO UPDATE SET opens = campaign_tracking_hours.opens + EXCLUDED.opens,
          clicks = campaign_tracking_hours.clicks + EXCLUDED.clicks`
      const campaigns = [...counts.campaigns.entries()].sort(([a], [b]) => byText(a, b)).map(([campaign_id, c]) => ({ campaign_id, ...c }))
      yield* sql`INSERT INTO campaign_tracking ${sql.insert(campaigns)}
        ON CONFLICT (campaign_id) DO UPDATE SET
          opens_total = campaign_tracking.opens_total + EXCLUDED.opens_total,
          opens_unique = campaign_tracking.opens_unique + EXCLUDED.opens_unique,
          opens_machine = campaign_tracking.opens_machine + EXCLUDED.opens_machine,
          clicks_total = campaign_tracking.clicks_total + EXCLUDED.clicks_total,
          clicks_unique = campaign_tracking.clicks_unique + EXCLUDED.clicks_unique`
    }))

/**
 * The hits that name a campaign's own delivery and (a click) a link the campaign has, with what
 * counting them needs; the others (transactional mail, a deleted delivery, a gone link) are dropped.
 */
const validHits = (hits: ReadonlyArray<LoggedHit>) =>
  Effect.gen(function*() {
    const deliveries = yield* campaignDeliveries(hits)
    const urls = yield* clickedLinks(hits)
    return hits.flatMap((hit) => {
      const d = deliveries.get(hit.deliveryId)
      if (d === undefined || d.campaign_id !== hit.campaignId) return []
      const url = hit.linkIndex === null ? null : urls.get(`${hit.campaignId} ${hit.linkIndex}`)
      return url === undefined ? [] : [{ hit, d, email: d.recipient.toLowerCase(), url }]
    })
  })

/**
 * Counts `hits` (taken from the log, ingest.ts, in log order), in the caller's transaction, each
 * exactly as it would have counted alone. A hit within its token's repeat window (`repeatMs`,
 * windows.ts) of the token's last counted fetch is not an open or a click and moves nothing. A
 * counted hit moves the counters and the first-per-contact marker whose primary key (campaign,
 * address) makes `email.opened` and `email.clicked` fire once per contact and campaign, the event
 * (outbox), and, while its token has left fewer than DETAIL_ROWS_PER_TOKEN, the detail row and the
 * contact's engagement fact (also the message's timeline). A machine open counts in `opens_total`
 * and `opens_machine` only: no marker, no event, no fact. A click is never an open. A hit whose
 * delivery is not its campaign's (transactional mail, a deleted delivery) or whose link the
 * campaign does not have is dropped. Answers how many hits counted.
 */
export const foldHits = (hits: ReadonlyArray<LoggedHit>, repeatMs: number) =>
  Effect.gen(function*() {
    if (hits.length === 0) return 0
    const valid = yield* validHits(hits)
    if (valid.length === 0) return 0
    // Windows first, then markers: the one lock order of every aggregator.
    const windows = yield* lockWindows(valid.map((v) => v.hit))
    const counted = valid.flatMap((v) => {
      const admission = admit(windowOf(windows, v.hit), v.hit, repeatMs)
      return admission.counted ? [{ ...v, detail: admission.detail }] : []
    })
    yield* saveWindows(windows)
    if (counted.length === 0) return 0

    const contacts = new Map<string, { campaignId: string; email: string; deliveryId: string }>()
    for (const { hit, email } of counted) {
      const key = `${hit.campaignId} ${email}`
      if (!(hit.linkIndex === null && hit.machine) && !contacts.has(key)) contacts.set(key, { campaignId: hit.campaignId, email, deliveryId: hit.deliveryId })
    }
    const ordered = [...contacts.values()].sort((a, b) => byText(a.campaignId, b.campaignId) || byText(a.email, b.email))
    const markers = ordered.length === 0 ? new Map<string, Marker>() : yield* lockMarkers(ordered)

    const counts = new BatchCounts()
    const facts: Array<{ readonly type: EngagementType; readonly fact: AddressFact }> = []
    const events: Array<OutboxEntry> = []
    for (const { hit, d, email, url, detail } of counted) {
      const fact = { accountId: d.account_id, keyId: d.key_id, email, at: hit.at, campaignId: hit.campaignId, messageId: d.message_id }
      const event = { accountId: d.account_id, keyId: d.key_id, at: hit.at }
      if (hit.linkIndex === null && hit.machine) {
        counts.add(hit, false, false, detail)
        continue
      }
      const marker = markers.get(`${hit.campaignId} ${email}`)!
      if (hit.linkIndex === null) {
        const first = !marker.opened
        if (first) {
          marker.opened = true
          marker.firstOpenedAt = hit.at
          marker.changed = true
          events.push({ ...event, event: EmailOpened.make({ campaign_id: hit.campaignId, email: d.recipient }) })
        }
        if (detail) facts.push({ type: "opened", fact })
        counts.add(hit, first, false, detail)
      } else {
        const first = marker.clicked.length === 0
        const firstOfLink = !marker.clicked.includes(hit.linkIndex)
        if (firstOfLink) {
          marker.clicked.push(hit.linkIndex)
          marker.changed = true
        }
        if (first) {
          marker.firstClickedAt = hit.at
          events.push({ ...event, event: EmailClicked.make({ campaign_id: hit.campaignId, email: d.recipient, url: url! }) })
        }
        if (detail) facts.push({ type: "clicked", fact: { ...fact, detail: url } })
        counts.add(hit, first, firstOfLink, detail)
      }
    }
    yield* saveMarkers(ordered.map((c) => markers.get(`${c.campaignId} ${c.email}`)!).filter((m) => m.changed))
    yield* recordFacts(facts)
    yield* emitEvents(events)
    yield* writeCounts(counts)
    return counts.counted
  })
