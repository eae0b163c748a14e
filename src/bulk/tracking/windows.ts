/**
 * What counts as an open or a click (issue 26 "Unauthenticated endpoints cost a bounded amount"):
 * a fetch of a token that is not within the repeat window (HERALD_TRACKING_REPEAT_SECONDS, 60 s
 * by default) of the token's last counted fetch. Replaying one open token 34,635 times in 30 s
 * recorded 34,635 opens; now it counts one per window. The owner of `tracking_token_windows`
 * (migration 0030): one row per token and opener class, holding its last counted fetch and how
 * many detail rows it left.
 *
 * Decided by the aggregator (fold.ts) for a whole batch at once: the batch's windows are created
 * where missing and locked in one statement, decided in memory hit by hit in log order, and
 * written back in one — never a read per hit. The request path's memory (repeats.ts) applies the
 * same rule earlier, so most repeats are never logged.
 *
 * The opener class is part of the token's window: a machine open (an image proxy's prefetch,
 * machine-opens.ts) and the person's open that follows are windows of their own, so the person's
 * first open is always counted and `opens_unique` stays as it was defined. Clicks are people's.
 *
 * Detail is capped per token and class: a counted fetch past DETAIL_ROWS_PER_TOKEN still moves the
 * counters, the markers and the events, but leaves no `tracking_hits` row and no engagement fact,
 * so one token can leave at most that many rows in either (and the contact's history, the
 * message's timeline and the `not_clicked` rules read at most that many per token).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { LoggedHit } from "./ingest.ts"
import { tokenKey } from "./repeats.ts"

/** Detail rows one token (and opener class) leaves at most: a person opens a mail a handful of times; a replay stops here. */
export const DETAIL_ROWS_PER_TOKEN = 50

/** The pixel's row in `tracking_token_windows.link_index` (links are 0 and up). */
const PIXEL = -1

/** A token's window, as read and as this batch moves it. */
export interface TokenWindow {
  readonly deliveryId: string
  readonly linkIndex: number
  readonly machine: boolean
  readonly campaignId: string
  countedAt: Date | null
  detailRows: number
  changed: boolean
}

/** The verdict on one hit: counted or not, and whether it leaves detail. */
export interface Admission {
  readonly counted: boolean
  readonly detail: boolean
}

const windowKey = (hit: LoggedHit) => tokenKey(hit.deliveryId, hit.linkIndex, hit.linkIndex === null && hit.machine)

/**
 * Counts `hit` against its token's window when it is not within `repeatMs` of the window's last
 * counted fetch (either side: hits of several replicas reach the log slightly out of order).
 */
export const admit = (window: TokenWindow, hit: LoggedHit, repeatMs: number): Admission => {
  const at = hit.at.getTime()
  if (window.countedAt !== null && Math.abs(at - window.countedAt.getTime()) < repeatMs) return { counted: false, detail: false }
  if (window.countedAt === null || at > window.countedAt.getTime()) window.countedAt = hit.at
  const detail = window.detailRows < DETAIL_ROWS_PER_TOKEN
  if (detail) window.detailRows += 1
  window.changed = true
  return { counted: true, detail }
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The windows of the tokens `hits` fetch, created where missing and locked, in one statement
 * (the no-op update of an existing row takes its lock and returns it). In (delivery, link, class)
 * order, before any marker: the lock order of every aggregator, so replicas' batches never deadlock.
 */
export const lockWindows = (hits: ReadonlyArray<LoggedHit>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wanted = new Map<string, { deliveryId: string; linkIndex: number; machine: boolean; campaignId: string }>()
    for (const hit of hits) {
      const key = windowKey(hit)
      if (!wanted.has(key)) {
        wanted.set(key, { deliveryId: hit.deliveryId, linkIndex: hit.linkIndex ?? PIXEL, machine: hit.linkIndex === null && hit.machine, campaignId: hit.campaignId })
      }
    }
    const rows = [...wanted.values()].sort((a, b) => byText(a.deliveryId, b.deliveryId) || a.linkIndex - b.linkIndex || Number(a.machine) - Number(b.machine))
    if (rows.length === 0) return new Map<string, TokenWindow>()
    const read = yield* sql<{ delivery_id: string; link_index: number; machine: boolean; campaign_id: string; counted_at: Date | null; detail_rows: number }>`
      INSERT INTO tracking_token_windows (delivery_id, link_index, machine, campaign_id)
      SELECT * FROM unnest(${rows.map((r) => r.deliveryId)}::text[], ${rows.map((r) => r.linkIndex)}::integer[],
        ${rows.map((r) => r.machine)}::boolean[], ${rows.map((r) => r.campaignId)}::text[])
      ON CONFLICT (delivery_id, link_index, machine) DO UPDATE SET campaign_id = tracking_token_windows.campaign_id
      RETURNING delivery_id, link_index, machine, campaign_id, counted_at, detail_rows`
    return new Map(read.map((r): [string, TokenWindow] => [tokenKey(r.delivery_id, r.link_index === PIXEL ? null : r.link_index, r.machine), {
      deliveryId: r.delivery_id,
      linkIndex: r.link_index,
      machine: r.machine,
      campaignId: r.campaign_id,
      countedAt: r.counted_at === null ? null : new Date(r.counted_at),
      detailRows: r.detail_rows,
      changed: false
    }]))
  })

/** The window `hit` belongs to (locked by `lockWindows` for the same batch). */
export const windowOf = (windows: ReadonlyMap<string, TokenWindow>, hit: LoggedHit): TokenWindow => windows.get(windowKey(hit))!

/** Writes back the windows this batch moved, in one statement. */
export const saveWindows = (windows: ReadonlyMap<string, TokenWindow>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const moved = [...windows.values()].filter((w) => w.changed)
    if (moved.length === 0) return
    yield* sql`UPDATE tracking_token_windows w SET counted_at = u.counted_at, detail_rows = u.detail_rows
      FROM unnest(${moved.map((w) => w.deliveryId)}::text[], ${moved.map((w) => w.linkIndex)}::integer[], ${moved.map((w) => w.machine)}::boolean[],
        ${moved.map((w) => w.countedAt)}::timestamptz[], ${moved.map((w) => w.detailRows)}::integer[])
        AS u(delivery_id, link_index, machine, counted_at, detail_rows)
      WHERE w.delivery_id = u.delivery_id AND w.link_index = u.link_index AND w.machine = u.machine`
  })

/**
 * Forgets the windows not counted since `before` (the detail prune's horizon): all their detail
 * rows are older and gone, and a window that old is long over.
 */
export const pruneWindows = (before: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM tracking_token_windows WHERE counted_at < ${before}`).pipe(Effect.asVoid)

/** A deleted campaign's windows (the campaign's tracking goes with it, store.ts). */
export const deleteCampaignWindows = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM tracking_token_windows WHERE campaign_id = ${campaignId}`).pipe(Effect.asVoid)
