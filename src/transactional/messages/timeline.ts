/**
 * A message's recipients and timeline from the facts on record (pure): the deliveries (one per
 * recipient), each outcome the MTA wrote (delivery_attempts), the DSNs that came back later
 * (inbound_bounces) and the complaints (inbound_complaints). MessageLookup.ts reads the facts.
 *
 * Per recipient, in order: `queued` when the send was accepted; for each outcome the MTA wrote, an
 * `attempt` (the host and its reply) when an SMTP reply decided it, then the outcome itself
 * (`deferred`, `sent`, `bounced`, `failed`; the reason as `reply` when no SMTP reply decided it: a
 * delivery-time check, no route); a DSN after the handover (`bounced` with its status and
 * diagnostic, or `deferred` for a delay notice); `complained`; a campaign message's `opened` and
 * `clicked` (with the link's `url`) from its tracking detail (src/bulk/tracking/: people's opens
 * only, not prefetching proxies'; kept 90 days). The recipients' entries are then
 * merged oldest first (a stable sort: entries at the same moment keep that order).
 */
import type { MessageRecipient, RecipientState, TimelineEntry, TimelineType } from "./Api.ts"

export interface DeliveryFact {
  readonly id: string
  readonly recipient: string
  readonly state: string
  readonly created_at: Date
  readonly updated_at: Date
  readonly last_status: string | null
  readonly last_reply: string | null
}

export interface AttemptFact {
  readonly delivery_id: string
  readonly at: Date
  readonly host: string | null
  readonly code: number | null
  readonly status: string | null
  readonly reply: string | null
  readonly outcome: string
  /** The session's TLS (columns added with MTA-STS, #35): null for attempts without a session or recorded before. */
  readonly tls_version?: string | null | undefined
  readonly tls_verified?: boolean | null | undefined
  readonly mta_sts?: string | null | undefined
}

export interface BounceFact {
  readonly delivery_id: string
  readonly at: Date
  readonly status: string
  readonly action: string
  readonly diagnostic: string | null
}

export interface ComplaintFact {
  readonly delivery_id: string
  readonly at: Date
}

export interface TrackingFact {
  readonly delivery_id: string
  readonly at: Date
  readonly kind: string
  readonly url: string | null
}

export interface MessageFacts {
  readonly deliveries: ReadonlyArray<DeliveryFact>
  readonly attempts: ReadonlyArray<AttemptFact>
  readonly bounces: ReadonlyArray<BounceFact>
  readonly complaints: ReadonlyArray<ComplaintFact>
  readonly tracking?: ReadonlyArray<TrackingFact>
}

/**
 * How src/mta/queue/delivery-checks.ts words the failure of a delivery whose recipient was
 * suppressed after acceptance: the one delivery row that ends `suppressed`. Recipients suppressed
 * at acceptance get no delivery row at all (the send's item says `suppressed`).
 */
const SUPPRESSED_REASON = "recipient suppressed"

const OUTCOMES: ReadonlySet<string> = new Set(["deferred", "sent", "bounced", "failed"])
const STATES: ReadonlySet<string> = new Set(["queued", "deferred", "sent", "bounced", "failed"])

/** A recipient's state: its delivery's, except that a complaint and a suppression at delivery time say more. */
export const recipientState = (d: Pick<DeliveryFact, "state" | "last_reply">, complained: boolean): RecipientState => {
  if (complained) return "complained"
  if (d.state === "failed" && (d.last_reply ?? "").startsWith(SUPPRESSED_REASON)) return "suppressed"
  return STATES.has(d.state) ? (d.state as RecipientState) : "failed"
}

const entry = (
  at: Date,
  type: TimelineType,
  recipient: string,
  fields: { readonly host?: string | null; readonly reply?: string | null; readonly status?: string | null; readonly url?: string | null } = {}
): TimelineEntry => ({
  at: at.toISOString(),
  type,
  recipient,
  ...(fields.host == null ? {} : { host: fields.host }),
  ...(fields.reply == null || fields.reply === "" ? {} : { reply: fields.reply }),
  ...(fields.status == null ? {} : { status: fields.status }),
  ...(fields.url == null ? {} : { url: fields.url })
})

/** An attempt's TLS facts as its timeline entry shows them (only those on record). */
const tlsFields = (a: AttemptFact): Pick<TimelineEntry, "tls_version" | "tls_verified" | "mta_sts"> => ({
  ...(a.tls_version == null ? {} : { tls_version: a.tls_version }),
  ...(a.tls_verified == null ? {} : { tls_verified: a.tls_verified }),
  ...(a.mta_sts === "enforce" || a.mta_sts === "testing" ? { mta_sts: a.mta_sts } : {})
})

const byDelivery = <A extends { readonly delivery_id: string }>(rows: ReadonlyArray<A>) => {
  const grouped = new Map<string, Array<A>>()
  for (const row of rows) grouped.set(row.delivery_id, [...(grouped.get(row.delivery_id) ?? []), row])
  return grouped
}

const recipientEntries = (
  d: DeliveryFact,
  attempts: ReadonlyArray<AttemptFact>,
  bounces: ReadonlyArray<BounceFact>,
  complaints: ReadonlyArray<ComplaintFact>,
  tracking: ReadonlyArray<TrackingFact>
) => {
  const entries: Array<TimelineEntry> = [entry(d.created_at, "queued", d.recipient)]
  for (const a of attempts) {
    const smtp = a.host !== null || a.code !== null
    if (smtp) entries.push({ ...entry(a.at, "attempt", d.recipient, { host: a.host, reply: a.reply }), ...tlsFields(a) })
    const type = OUTCOMES.has(a.outcome) ? (a.outcome as TimelineType) : "failed"
    entries.push(entry(a.at, type, d.recipient, { status: a.status, reply: smtp ? null : a.reply }))
  }
  // A delivery finished before attempts were recorded: its last outcome, as the row keeps it.
  if (attempts.length === 0 && d.state !== "queued" && !bounces.some((b) => b.action !== "delayed")) {
    entries.push(entry(d.updated_at, recipientState(d, false) === "suppressed" ? "failed" : (d.state as TimelineType), d.recipient, {
      status: d.last_status,
      reply: d.last_reply
    }))
  }
  for (const b of bounces) {
    entries.push(entry(b.at, b.action === "delayed" ? "deferred" : "bounced", d.recipient, { status: b.status, reply: b.diagnostic }))
  }
  for (const c of complaints) entries.push(entry(c.at, "complained", d.recipient))
  for (const t of tracking) entries.push(entry(t.at, t.kind === "open" ? "opened" : "clicked", d.recipient, { url: t.url }))
  return entries
}

/** The recipients (in delivery order) and the whole timeline, oldest first. */
export const messageHistory = (facts: MessageFacts): {
  readonly recipients: ReadonlyArray<MessageRecipient>
  readonly timeline: ReadonlyArray<TimelineEntry>
} => {
  const attempts = byDelivery(facts.attempts)
  const bounces = byDelivery(facts.bounces)
  const complaints = byDelivery(facts.complaints)
  const tracking = byDelivery(facts.tracking ?? [])
  const recipients = facts.deliveries.map((d) => ({
    email: d.recipient,
    state: recipientState(d, (complaints.get(d.id) ?? []).length > 0)
  }))
  const timeline = facts.deliveries
    .flatMap((d) => recipientEntries(d, attempts.get(d.id) ?? [], bounces.get(d.id) ?? [], complaints.get(d.id) ?? [], tracking.get(d.id) ?? []))
    .map((e, i) => ({ e, i, t: Date.parse(e.at) }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map(({ e }) => e)
  return { recipients, timeline }
}
