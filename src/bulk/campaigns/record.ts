/**
 * A campaign row as the API shows it, with its counts read from its deliveries (the messages that
 * name it): `sent_count` the deliveries the far side accepted and still stand, `failed_count`
 * those that failed for good or bounced (a DSN after `sent` moves one from the first to the
 * second by itself), never the deliveries a cancel dropped before any attempt.
 */
import type { SqlClient } from "@effect/sql"
import { campaignDeliveryCounts, frozenSender } from "../../mta/queue/read-models/campaign-progress.ts"
import type { CampaignStatus, PauseReason } from "./states.ts"

/** One A/B variant as stored (issue 30 item 12; variants.ts): a subject, its own content or template, or neither. */
export interface CampaignVariant {
  readonly subject: string
  readonly template_id: string | null
  readonly html: string | null
  readonly body_text: string | null
  readonly mjml: string | null
  readonly preheader: string | null
}

/** A variant as the API takes it: the optional fields may be left out. */
export type VariantInput = { readonly subject: string } & {
  readonly [K in Exclude<keyof CampaignVariant, "subject">]?: CampaignVariant[K] | undefined
}

export interface AbTest {
  readonly test_percent: number
  readonly metric: "opens" | "clicks"
  readonly wait_minutes: number
}

export interface CampaignFields {
  readonly name: string
  readonly template_id: string | null
  readonly subject: string | null
  readonly html: string | null
  readonly body_text: string | null
  readonly mjml: string | null
  readonly preheader: string | null
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
  readonly list_ids: ReadonlyArray<string>
  readonly segment_id: string | null
  /** A/B test (issue 30 item 12): 2–4 variants and the test's settings, or both null (one content). */
  readonly variants: ReadonlyArray<CampaignVariant> | null
  readonly ab_test: AbTest | null
}

export interface CampaignRow extends CampaignFields {
  readonly id: string
  readonly account_id: string
  readonly key_id: string
  readonly status: CampaignStatus
  readonly pause_reason: PauseReason | null
  readonly pause_message: string | null
  readonly total_contacts: number | null
  readonly scheduled_at: Date | null
  readonly content_id: string | null
  readonly queued_count: number
  readonly allow_partial: boolean
  readonly created_at: Date
  readonly started_at: Date | null
  readonly completed_at: Date | null
  readonly sent_count: number
  readonly failed_count: number
  /** The sender its mail goes out with (see `effectiveSender`). */
  readonly sender_email: string | null
  readonly sender_name: string | null
  readonly sender_reply_to: string | null
  /** Set when an A/B campaign starts (ab-test.ts): the test share's size and each variant's stored content. */
  readonly ab_test_size: number | null
  readonly variant_content_ids: ReadonlyArray<string> | null
  /** When the winner is due (the test share fully queued + the wait), and the winner once decided. */
  readonly ab_decide_at: Date | null
  readonly ab_winner: number | null
}

/**
 * `SELECT` of campaigns `c` with their counts and their effective sender: add `WHERE …` after it.
 * The sender is what the mail goes out with: once started, what the content was frozen with; before,
 * the campaign's own fields over its template's as they are now (the rule of freeze.ts
 * `contentSource`: the campaign's from_email brings its own from_name, even a null one).
 */
export const selectCampaigns = (sql: SqlClient.SqlClient) =>
  sql`SELECT c.*, coalesce(k.sent, 0)::integer AS sent_count, coalesce(k.failed, 0)::integer AS failed_count,
      CASE WHEN c.content_id IS NOT NULL THEN f.frozen_from_email ELSE coalesce(c.from_email, t.from_email) END AS sender_email,
      CASE WHEN c.content_id IS NOT NULL THEN f.frozen_from_name
        WHEN c.from_email IS NOT NULL THEN c.from_name ELSE coalesce(c.from_name, t.from_name) END AS sender_name,
      CASE WHEN c.content_id IS NOT NULL THEN f.frozen_reply_to ELSE coalesce(c.reply_to, t.reply_to) END AS sender_reply_to
    FROM campaigns c LEFT JOIN LATERAL (${campaignDeliveryCounts(sql, sql`c.id`)}) k ON c.started_at IS NOT NULL
      LEFT JOIN LATERAL (${frozenSender(sql, sql`c.content_id`)}) f ON c.content_id IS NOT NULL
      LEFT JOIN templates t ON t.id = c.template_id AND t.key_id = c.key_id AND c.content_id IS NULL`

/** sent / total as a fraction with 4 decimals; 0 without contacts. */
export const deliveryRate = (sent: number, total: number | null): number =>
  total === null || total === 0 ? 0 : Math.round((sent / total) * 10_000) / 10_000

export const toRecord = (row: CampaignRow) => ({
  id: row.id,
  name: row.name,
  status: row.status,
  pause_reason: row.pause_reason,
  pause_message: row.pause_reason === null ? null : row.pause_message,
  template_id: row.template_id,
  subject: row.subject,
  html: row.html,
  body_text: row.body_text,
  mjml: row.mjml,
  preheader: row.preheader,
  from_email: row.from_email,
  from_name: row.from_name,
  reply_to: row.reply_to,
  sender: { from_email: row.sender_email, from_name: row.sender_name, reply_to: row.sender_reply_to },
  list_ids: row.list_ids,
  segment_id: row.segment_id,
  variants: row.variants,
  ab_test: row.ab_test,
  total_contacts: row.total_contacts,
  scheduled_at: row.scheduled_at?.toISOString() ?? null,
  sent_count: row.sent_count,
  failed_count: row.failed_count,
  delivery_rate: deliveryRate(row.sent_count, row.total_contacts),
  created_at: row.created_at.toISOString(),
  started_at: row.started_at?.toISOString() ?? null,
  completed_at: row.completed_at?.toISOString() ?? null
})
