/**
 * The campaign's calls that move it between states (states.ts): send (now or scheduled),
 * unschedule, pause, resume, cancel, and the scheduler's start of a due campaign. Each runs in one transaction with
 * the campaign's row locked: the state is read, the call checked against the table (409 and
 * nothing changed otherwise), and the new state written with what it brings — the recipient set
 * frozen (freeze.ts), the queued rows held, woken or dropped (src/mta/queue/campaign-rows.ts).
 *
 * `send` and `resume` produce mail, so the send endpoint's rules apply with its codes: the rate
 * window (send-context.ts, which counts the call), the account's status, the sender domain
 * (`refuseSender`), and a monthly quota already used up without overage (429).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { isStatementTimeout, QueryTooExpensive, setStatementTimeout } from "../../db/statement-timeout.ts"
import { rearmAfterResume } from "./reputation.ts"
import { dropCampaignDeliveries, holdCampaignDeliveries, wakeCampaignDeliveries } from "../../mta/queue/campaign-rows.ts"
import { QuotaExhausted } from "../../platform/usage/Quota.ts"
import type { Limits } from "../../platform/usage/AccountLimits.ts"
import { refuseSender } from "../../transactional/accept.ts"
import { SCHEDULE_HORIZON_MS, SCHEDULE_SKEW_MS } from "../../transactional/limits.ts"
import { SendContext } from "../../transactional/send-context.ts"
import type { Owner } from "../templates/Templates.ts"
import type { TrackingUrls } from "../tracking/rewrite.ts"
import { CampaignNotFound, Campaigns, CampaignStateConflict } from "./Campaigns.ts"
import { startAbTest } from "./ab-test.ts"
import { checkStartable, contentSource, freeze } from "./freeze.ts"
import { quotaCovers } from "./quota-cover.ts"
import type { CampaignRow } from "./record.ts"
import { footerOf } from "../settings/Settings.ts"
import { allowed, type CampaignCall } from "./states.ts"

export class InvalidSchedule extends Data.TaggedError("InvalidSchedule")<{ readonly message: string }> {}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/

/** scheduled_at as an instant: ISO 8601 with a time zone, not in the past (60 s of skew), at most 90 days ahead. */
export const parseSchedule = (value: string, now: Date): Date | InvalidSchedule => {
  const at = Date.parse(value)
  if (!ISO_DATE_TIME.test(value) || Number.isNaN(at)) {
    return new InvalidSchedule({ message: "scheduled_at must be an ISO 8601 date-time with a time zone, such as 2026-12-01T09:00:00Z" })
  }
  if (at < now.getTime() - SCHEDULE_SKEW_MS) return new InvalidSchedule({ message: "scheduled_at is in the past" })
  if (at > now.getTime() + SCHEDULE_HORIZON_MS) return new InvalidSchedule({ message: "scheduled_at must be at most 90 days ahead" })
  return new Date(at)
}

/** The monthly quota used up before anything of this campaign, and no overage: refused as a send is (429). */
const quotaLeft = (limits: Limits) =>
  Effect.gen(function*() {
    if (limits.overageOffered) return
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ sent: number }>`
      SELECT sent FROM account_usage WHERE account_id = ${limits.accountId} AND period_start = ${limits.period.start}`
    const used = rows[0]?.sent ?? 0
    if (used >= limits.monthlyQuota) return yield* new QuotaExhausted({ used, quota: limits.monthlyQuota })
  })

/**
 * Moves a locked campaign to `sending`: the recipient set is frozen now unless it already is (a
 * campaign paused after its start keeps its set). Answers the campaign's total.
 *
 * The freeze reads the whole audience (1,000,000 contacts measured by bench/audience.ts) in one
 * statement: it runs under HERALD_LONG_QUERY_TIMEOUT_MS, not the request reads' limit, in a
 * savepoint, so that one past it fails as `QueryTooExpensive` (param `segment_id`) and leaves the
 * caller's transaction usable. With `cover`, the quota must cover the recipients not yet queued
 * (quota-cover.ts), else OverageNotOffered and the savepoint is rolled back: nothing frozen.
 */
export const startSending = (campaign: CampaignRow, now: Date, urls: TrackingUrls, longQueryTimeoutMs: number, cover?: Limits) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.zipRight(
      setStatementTimeout(sql, longQueryTimeoutMs),
      Effect.tap(moveToSending(campaign, now, urls), () => cover === undefined ? Effect.void : quotaCovers(campaign.id, cover))
    )).pipe(
      Effect.catchIf((e) => isStatementTimeout(e), () =>
        Effect.fail(new QueryTooExpensive({
          param: campaign.segment_id === null ? "list_ids" : "segment_id",
          message: `Freezing the campaign's audience took longer than ${longQueryTimeoutMs} ms (HERALD_LONG_QUERY_TIMEOUT_MS): `
            + "target fewer contacts, or a segment with fewer or narrower rules",
          timeoutMs: longQueryTimeoutMs
        })))
    ))

const moveToSending = (campaign: CampaignRow, now: Date, urls: TrackingUrls) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (campaign.total_contacts !== null) {
      yield* sql`UPDATE campaigns SET status = 'sending', pause_reason = NULL, updated_at = ${now} WHERE id = ${campaign.id}`
      yield* rearmAfterResume(campaign.id, campaign.pause_reason)
      yield* wakeCampaignDeliveries(campaign.id, now)
      return campaign.total_contacts
    }
    // An A/B test freezes each variant's content and its test share (ab-test.ts).
    if (campaign.variants !== null) return yield* startAbTest(campaign, now, urls)
    const source = yield* contentSource(campaign)
    const fromEmail = yield* checkStartable(campaign, source)
    const footer = yield* footerOf(campaign.key_id)
    const { contentId, total } = yield* freeze(campaign, { ...source, from_email: fromEmail }, now, urls, footer)
    yield* sql`UPDATE campaigns SET status = 'sending', pause_reason = NULL, total_contacts = ${total}, content_id = ${contentId},
        from_email = coalesce(from_email, ${fromEmail}), started_at = coalesce(started_at, ${now}), updated_at = ${now}
      WHERE id = ${campaign.id}`
    return total
  })

/**
 * Delivery met this campaign's content stopped at the render deadline too often (the MTA's count,
 * src/mta/compose/render-at-delivery.ts, through the BulkContent port): the campaign pauses with
 * `pause_reason: render_failed` at once, before the next recipient pays the deadline. Only a
 * `sending` or `scheduled` campaign: one paused, cancelled or done already stays as it is. Its
 * queued deliveries are held by the claim's check of the campaign; `resume` tries again.
 */
export const pauseForRenderFailure = (campaignId: string, now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE campaigns SET status = 'paused', pause_reason = 'render_failed', pause_message = NULL, updated_at = ${now}
      WHERE id = ${campaignId} AND status IN ('sending', 'scheduled')`.pipe(Effect.asVoid))

/**
 * A campaign paused before its start whose time is still ahead: `resume` puts it back on its
 * schedule rather than sending at once (the marketer paused a plan, not asked for mail now).
 */
const stillScheduled = (row: CampaignRow, at: Date) =>
  row.started_at === null && row.scheduled_at !== null && row.scheduled_at.getTime() > at.getTime()

export class CampaignControl extends Effect.Service<CampaignControl>()("herald/CampaignControl", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const campaigns = yield* Campaigns
    const config = yield* AppConfig
    const urls: TrackingUrls = { trackUrl: config.trackUrl, baseUrl: config.baseUrl }
    const sendContext = yield* SendContext
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const locked = (owner: Owner, id: string, call: CampaignCall) =>
      Effect.gen(function*() {
        const row = yield* campaigns.find(owner, id, true)
        if (!allowed(call, row.status)) return yield* new CampaignStateConflict({ id, call, status: row.status })
        return row
      })

    /** The send endpoint's refusals for mail from `fromEmail` now; counts the call in the rate window. */
    const refusals = (owner: Owner, fromEmail: string | null, at: Date) =>
      Effect.gen(function*() {
        // The sender question needs a recipient: a non-simulator one, so the domain must be verified.
        const sender = fromEmail === null ? undefined : { fromEmail, recipients: [fromEmail.toLowerCase()] }
        const { limits, sender: facts } = yield* sendContext.admit(owner.keyId, owner.accountId, at, sender)
        if (fromEmail !== null && facts !== undefined) yield* refuseSender(fromEmail, [fromEmail], limits, facts.domainState)
        yield* quotaLeft(limits)
        return limits
      })

    /** The sender a campaign would send from (its own, else its template's), null when it has none yet. */
    const senderOf = (row: CampaignRow) => Effect.map(Effect.either(contentSource(row)), (s) => s._tag === "Right" ? s.right.from_email : row.from_email)

    const send = (owner: Owner, id: string, scheduledAt: string | null | undefined, allowPartial: boolean) =>
      Effect.gen(function*() {
        const at = yield* now
        const when = scheduledAt === undefined || scheduledAt === null ? null : parseSchedule(scheduledAt, at)
        if (when instanceof InvalidSchedule) return yield* when
        const call: CampaignCall = when === null ? "send" : "schedule"
        // Checked before the refusals, so a refused transition leaves the rate window alone as well.
        const first = yield* locked(owner, id, call).pipe(sql.withTransaction)
        // CAN-SPAM: no bulk mail without the sender's postal address (issue 30 item 9); before the rate window, as bad input.
        yield* footerOf(owner.keyId)
        const limits = yield* refusals(owner, yield* senderOf(first), at)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* locked(owner, id, call)
          if (when !== null) {
            const source = yield* contentSource(row)
            yield* checkStartable(row, source)
            yield* sql`UPDATE campaigns SET status = 'scheduled', scheduled_at = ${when}, allow_partial = ${allowPartial}, updated_at = ${at}
              WHERE id = ${id}`
            return { id, status: "scheduled" as const, scheduled_at: when.toISOString() }
          }
          const total = yield* startSending(row, at, urls, config.longQueryTimeoutMs, allowPartial ? undefined : limits)
          return { id, status: "sending" as const, total_contacts: total }
        }))
      })

    const pause = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* locked(owner, id, "pause")
        const at = yield* now
        yield* sql`UPDATE campaigns SET status = 'paused', pause_reason = 'manual', pause_message = NULL, updated_at = ${at} WHERE id = ${id}`
        yield* holdCampaignDeliveries(id, at)
      })).pipe(Effect.zipRight(campaigns.read(owner, id)))

    const resume = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const first = yield* locked(owner, id, "resume").pipe(sql.withTransaction)
        yield* refusals(owner, yield* senderOf(first), at)
        yield* sql.withTransaction(Effect.flatMap(locked(owner, id, "resume"), (row) =>
          stillScheduled(row, at)
            ? Effect.asVoid(sql`UPDATE campaigns SET status = 'scheduled', pause_reason = NULL, updated_at = ${at} WHERE id = ${id}`)
            : startSending(row, at, urls, config.longQueryTimeoutMs)))
        return yield* campaigns.read(owner, id)
      })

    /** scheduled → draft, its time forgotten: nothing is frozen or queued before the start, so nothing else to undo. */
    const unschedule = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* locked(owner, id, "unschedule")
        yield* sql`UPDATE campaigns SET status = 'draft', scheduled_at = NULL, pause_reason = NULL, updated_at = ${yield* now} WHERE id = ${id}`
      })).pipe(Effect.zipRight(campaigns.read(owner, id)))

    const cancel = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* locked(owner, id, "cancel")
        const at = yield* now
        yield* sql`UPDATE campaigns SET status = 'cancelled', pause_reason = NULL, updated_at = ${at} WHERE id = ${id}`
        yield* dropCampaignDeliveries(id, at)
      })).pipe(Effect.zipRight(campaigns.read(owner, id)))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      send: (owner: Owner, id: string, scheduledAt: string | null | undefined, allowPartial = false) =>
        withSql(send(owner, id, scheduledAt, allowPartial)),
      pause: (owner: Owner, id: string) => withSql(pause(owner, id)),
      resume: (owner: Owner, id: string) => withSql(resume(owner, id)),
      unschedule: (owner: Owner, id: string) => withSql(unschedule(owner, id)),
      cancel: (owner: Owner, id: string) => withSql(cancel(owner, id))
    } as const
  })
}) {}

export { CampaignNotFound }
