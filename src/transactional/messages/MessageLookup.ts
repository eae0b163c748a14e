/**
 * A message as its sender sees it: a read model over the queue (messages, message_contents,
 * deliveries, delivery_attempts), what came back for it (inbound_bounces, inbound_complaints) and,
 * for campaign mail, its opens and clicks (tracking_hits, campaign_links),
 * in one statement. The owners of those tables write them; this only reads (docs/architecture.md "Who owns
 * which table"). Only the caller's account's messages are found: another account's id, and a sandbox
 * send's id (sandbox stores nothing), are simply not there.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import { COMPLAINED_EVENT } from "../../events/schema.ts"
import { SIMULATOR_DOMAIN, SIMULATOR_ISP } from "../../lib/simulator.ts"
import type { MessageView } from "./Api.ts"
import { messageHistory } from "./timeline.ts"

export class MessageNotFound extends Data.TaggedError("MessageNotFound")<{ readonly id: string }> {}

/** A timestamp inside a JSON aggregate: PostgreSQL writes it as text. */
const At = Schema.DateFromString

const NullableString = Schema.NullOr(Schema.String)

/** The row of the one statement: the message's columns and its facts as JSON arrays. */
const Row = Schema.Struct({
  id: Schema.String,
  from_email: Schema.String,
  from_name: NullableString,
  subject: Schema.String,
  created_at: Schema.DateFromSelf,
  channel: Schema.Literal("transactional", "bulk"),
  deliveries: Schema.Array(Schema.Struct({
    id: Schema.String,
    recipient: Schema.String,
    state: Schema.String,
    created_at: At,
    updated_at: At,
    last_status: NullableString,
    last_reply: NullableString
  })),
  attempts: Schema.Array(Schema.Struct({
    delivery_id: Schema.String,
    at: At,
    host: NullableString,
    code: Schema.NullOr(Schema.Number),
    status: NullableString,
    reply: NullableString,
    outcome: Schema.String,
    tls_version: Schema.optional(NullableString),
    tls_verified: Schema.optional(Schema.NullOr(Schema.Boolean)),
    mta_sts: Schema.optional(NullableString)
  })),
  bounces: Schema.Array(Schema.Struct({
    delivery_id: Schema.String,
    at: At,
    status: Schema.String,
    action: Schema.String,
    diagnostic: NullableString
  })),
  complaints: Schema.Array(Schema.Struct({ delivery_id: Schema.String, at: At })),
  tracking: Schema.Array(Schema.Struct({ delivery_id: Schema.String, at: At, kind: Schema.String, url: NullableString }))
})

const decodeRow = Schema.decodeUnknown(Row)

/** Who asks for a message: the calling key and its account. */
export interface MessageViewer {
  readonly accountId: string
  readonly keyId: string
}

export class MessageLookup extends Effect.Service<MessageLookup>()("herald/MessageLookup", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The facts by index: deliveries_message (the message's deliveries), delivery_attempts_delivery
     * and inbound_bounces_delivery (per delivery), inbound_complaints_once (the complaints that
     * count: abuse, fraud, virus — one per delivery). The sender's name lives in the request's
     * shared part (message_contents), or in the message's own content for rows of older versions;
     * only that field is read, never the body or attachments.
     */
    const find = (viewer: MessageViewer, messageId: string) =>
      sql`
        SELECT m.id, m.from_email, coalesce(c.content->'from'->>'name', m.content->'from'->>'name') AS from_name,
          -- Campaign and sequence mail: the subject as rendered for the contact (recorded with the outcome).
          coalesce((SELECT d.rendered_subject FROM deliveries d WHERE d.message_id = m.id AND d.rendered_subject IS NOT NULL LIMIT 1),
            m.subject) AS subject,
          m.created_at, m.channel,
          (SELECT coalesce(json_agg(json_build_object('id', d.id, 'recipient', d.recipient, 'state', d.state, 'created_at', d.created_at,
              'updated_at', d.updated_at, 'last_status', d.last_status, 'last_reply', d.last_reply)
              ORDER BY d.created_at, array_position(ARRAY['to', 'cc', 'bcc'], d.recipient_kind), d.recipient), '[]')
            FROM deliveries d WHERE d.message_id = m.id) AS deliveries,
          (SELECT coalesce(json_agg(json_build_object('delivery_id', a.delivery_id, 'at', a.at, 'host', a.host, 'code', a.code,
              'status', a.status, 'reply', a.reply, 'outcome', a.outcome, 'tls_version', a.tls_version, 'tls_verified', a.tls_verified,
              'mta_sts', a.mta_sts_mode) ORDER BY a.at, a.id), '[]')
            FROM delivery_attempts a WHERE a.delivery_id IN (SELECT id FROM deliveries WHERE message_id = m.id)) AS attempts,
          (SELECT coalesce(json_agg(json_build_object('delivery_id', b.delivery_id, 'at', b.created_at, 'status', b.status,
              'action', b.action, 'diagnostic', b.diagnostic) ORDER BY b.created_at, b.id), '[]')
            FROM inbound_bounces b WHERE b.delivery_id IN (SELECT id FROM deliveries WHERE message_id = m.id)) AS bounces,
          (SELECT coalesce(json_agg(json_build_object('delivery_id', k.delivery_id, 'at', k.at) ORDER BY k.at), '[]') FROM (
              SELECT k.delivery_id, k.created_at AS at FROM inbound_complaints k WHERE k.feedback_type IN ('abuse', 'fraud', 'virus')
                AND k.delivery_id IN (SELECT id FROM deliveries WHERE message_id = m.id)
              UNION ALL
              -- A simulated complaint is an event only (src/mta/simulator.ts: no report on record, no
              -- suppression), written 1 ms after the delivery's sent outcome in the same transaction.
              SELECT d.id, e.created_at FROM deliveries d JOIN events e ON e.account_id = d.account_id AND e.key_id = d.key_id
                AND e.event = ${COMPLAINED_EVENT} AND e.payload->>'isp' = ${SIMULATOR_ISP} AND e.payload->>'email' = d.recipient
                AND e.created_at BETWEEN d.completed_at AND d.completed_at + interval '1 second'
              WHERE d.message_id = m.id AND d.recipient_domain = ${SIMULATOR_DOMAIN} AND d.state = 'sent'
            ) k) AS complaints,
          -- A campaign message's opens (people's, not prefetching proxies') and clicks with their link.
          (SELECT coalesce(json_agg(json_build_object('delivery_id', t.delivery_id, 'at', t.at, 'kind', t.kind, 'url', l.url)
              ORDER BY t.at, t.id), '[]')
            FROM tracking_hits t LEFT JOIN campaign_links l ON l.campaign_id = t.campaign_id AND l.link_index = t.link_index
            WHERE NOT t.machine AND t.delivery_id IN (SELECT id FROM deliveries WHERE message_id = m.id)) AS tracking
        FROM messages m LEFT JOIN message_contents c ON c.id = m.content_id
        WHERE m.id = ${messageId} AND m.account_id = ${viewer.accountId}
          -- Bulk resources belong to keys (#28): another key of the account sees its transactional mail only.
          AND (m.channel = 'transactional' OR m.key_id = ${viewer.keyId})`

    /** The message `messageId` as `viewer` may see it (its account's; bulk mail only its key's), or MessageNotFound. */
    const get = (viewer: MessageViewer, messageId: string) =>
      Effect.gen(function*() {
        const [raw] = yield* find(viewer, messageId)
        if (raw === undefined) return yield* new MessageNotFound({ id: messageId })
        // A row that does not decode is a defect of this statement, not the caller's request.
        const row = yield* Effect.orDie(decodeRow(raw))
        const { recipients, timeline } = messageHistory(row)
        const view: MessageView = {
          id: row.id,
          from: row.from_name === null ? { email: row.from_email } : { email: row.from_email, name: row.from_name },
          subject: row.subject,
          created_at: row.created_at.toISOString(),
          channel: row.channel,
          recipients,
          timeline
        }
        return view
      })

    return { get } as const
  })
}) {}
