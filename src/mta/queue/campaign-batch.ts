/**
 * One batch of a campaign's fan-out into the queue: its messages and deliveries, built by
 * PostgreSQL from the frozen recipients (`campaign_recipients`) in one statement whose parameters
 * are the range and two arrays of ids. Measured on bench/campaign.ts, the same rows sent as
 * `sql.insert` values (15 parameters a row, each encoded by the client) cost ~0.3 ms of appliance
 * CPU per recipient, most of the fan-out; ids are still made here (`newId`), as for every message,
 * and given to the recipients in position order.
 *
 * Each message's `content` is the stored message's own part (the `campaign` form of
 * src/mta/queue/StoredMessage.ts without its shared `message`), made with `jsonb_build_object`.
 * That JSON is a second writer of the queue's contract, so it is held to the schema: the object's
 * fields are `ownPartFields`, typed by the schema's encoded form (a field added to or renamed in
 * `CampaignReference` does not compile until the batch writes it), its constants are the schema's
 * literals, and test/mta/campaign-batch.test.ts decodes every row a real batch writes.
 */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import { domainOf } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"
import type { QueueContext, SharedContent } from "./enqueue.ts"
import type { CampaignReference } from "./StoredMessage.ts"

/** What a campaign message stores in `messages.content`: the campaign form but its shared `message`. */
type CampaignOwnPart = Omit<typeof CampaignReference.Encoded, "message">

/** The constant fields of every fan-out message, checked against the schema's literals. */
const FAN_OUT_CONSTANTS = { _tag: "campaign", origin: "campaign", channel: "bulk" } as const satisfies Pick<
  CampaignOwnPart,
  "_tag" | "origin" | "channel"
>

/**
 * Every field of the own part, as the SQL that builds it from a `campaign_recipients` row `r`. A
 * contact with no name has no `name` in `to` (an empty one neither: the header shows the address
 * alone) and none in its variables.
 */
const ownPartFields: { readonly [K in keyof Required<CampaignOwnPart>]: string } = {
  _tag: `'${FAN_OUT_CONSTANTS._tag}'`,
  origin: `'${FAN_OUT_CONSTANTS.origin}'`,
  channel: `'${FAN_OUT_CONSTANTS.channel}'`,
  campaign_id: "r.campaign_id",
  contact_id: "r.contact_id",
  to: `CASE WHEN coalesce(r.name, '') = '' THEN jsonb_build_object('email', r.email)
            ELSE jsonb_build_object('email', r.email, 'name', r.name) END`,
  variables: `CASE WHEN r.name IS NULL THEN jsonb_build_object('email', r.email, 'metadata', r.metadata)
            ELSE jsonb_build_object('email', r.email, 'name', r.name, 'metadata', r.metadata) END`
}

/** `jsonb_build_object('_tag', 'campaign', …)`: constant SQL text, so one statement shape and plan for every batch. */
const OWN_PART_SQL = `jsonb_build_object(${Object.entries(ownPartFields).map(([field, expression]) => `'${field}', ${expression}`).join(", ")})`

/**
 * One batch of a campaign's fan-out: the `count` frozen recipients (campaign_recipients) with
 * positions in (`after`, `through`], sharing `shared`.
 */
export interface CampaignBatch {
  readonly campaignId: string
  readonly shared: SharedContent
  readonly subject: string
  readonly after: number
  readonly through: number
  readonly count: number
  /** Only the recipients of this A/B variant in the range (their content is `shared`); all of them when absent. */
  readonly variant?: number | undefined
}

/** The batch's rows: one message and one delivery per recipient, in one statement. */
export const writeCampaignBatch = (context: QueueContext, batch: CampaignBatch) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (batch.count === 0) return
    const messageIds = Array.from({ length: batch.count }, () => newId("msg"))
    const deliveryIds = Array.from({ length: batch.count }, () => newId("dlv"))
    const { accountId, keyId, requestId, fromEmail, now } = context
    const ownPart: Fragment = sql.literal(OWN_PART_SQL)
    // Without a variant the statement's text is exactly what it was before A/B tests (the bench's path).
    const ofVariant: Fragment = batch.variant === undefined ? sql.literal("") : sql` AND r.variant = ${batch.variant}`
    const [written] = yield* sql<{ n: number }>`WITH recipients AS (
        SELECT r.*, row_number() OVER (ORDER BY r.position) AS i FROM campaign_recipients r
        WHERE r.campaign_id = ${batch.campaignId} AND r.position > ${batch.after} AND r.position <= ${batch.through}${ofVariant}
      ), batch AS (
        SELECT ids.message_id, ids.delivery_id, r.position, r.email, ${ownPart} AS content
        FROM recipients r
        JOIN unnest(${messageIds}::text[], ${deliveryIds}::text[]) WITH ORDINALITY AS ids(message_id, delivery_id, i) ON ids.i = r.i
      ), queued_messages AS (
        INSERT INTO messages (id, account_id, key_id, request_id, personalization_index, from_email, from_domain, subject, content,
          content_id, origin, channel, campaign_id, content_bytes, created_at)
        SELECT message_id, ${accountId}, ${keyId}, ${requestId}, position, ${fromEmail}, ${domainOf(fromEmail)}, ${batch.subject}, content,
          ${batch.shared.id}, 'campaign', 'bulk', ${batch.campaignId}, octet_length(content::text) + ${batch.shared.bytes}, ${now}
        FROM batch
      ), queued AS (
        INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind, channel,
          next_attempt_at, created_at, updated_at)
        SELECT delivery_id, message_id, ${accountId}, ${keyId}, email, lower(substring(email FROM '[^@]*$')), 'to', 'bulk', ${now}, ${now}, ${now}
        FROM batch
        RETURNING 1
      )
      SELECT count(*)::integer AS n FROM queued`
    // Never a recipient left out: the count came from the same rows, in this transaction.
    if (written?.n !== batch.count) {
      return yield* Effect.die(new Error(`campaign ${batch.campaignId}: ${written?.n} of ${batch.count} recipients written in (${batch.after}, ${batch.through}]`))
    }
  })
