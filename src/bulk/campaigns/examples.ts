/** The reference's errors and examples for /v1/bulk/campaigns (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { MAILING_ERRORS } from "../reference-errors.ts"
import { type CampaignsGroup, PREVIEW_EXAMPLE, PREVIEW_REQUEST_EXAMPLE, TEST_SEND_EXAMPLE, TEST_SEND_REQUEST_EXAMPLE } from "./Api.ts"

const CAMPAIGN_ID = "cp_6tV1nB8mK3qW5xZ2pL9d"
const LIST_ID = "ls_2kR7mW4pX9vB1nQ6tZ3c"
const NOT_FOUND = "404 `not_found` when this key has no campaign `{id}`."
const STATE = "409 `conflict` when the campaign's state does not allow the call (the group's state table); nothing changes."
const FIELDS = "400 `validation_failed` (param names the field) for a template_id, list or segment this key does not have, "
  + "or both a template_id and inline content; `render_failed` when the content does not compile; 413 `payload_too_large` over "
  + "512 KB of content; 503 `render_busy` when every render worker is taken."
const START = "400 `validation_failed` (param names the field) when the campaign is incomplete (no sender, subject, content, "
  + "list_ids or segment_id, or its template or segment is gone); 422 `query_too_expensive` when freezing the recipients runs "
  + `past the long statement timeout. ${MAILING_ERRORS}`

const campaign = {
  id: CAMPAIGN_ID,
  name: "November news",
  status: "draft",
  pause_reason: null,
  pause_message: null,
  template_id: "tp_4mQ8vR2kT6wX9zB3nC5d",
  subject: null,
  html: null,
  body_text: null,
  mjml: null,
  preheader: null,
  from_email: "news@example.org",
  from_name: "Example News",
  reply_to: null,
  sender: { from_email: "news@example.org", from_name: "Example News", reply_to: "help@example.org" },
  list_ids: [LIST_ID],
  segment_id: null,
  variants: null,
  ab_test: null,
  total_contacts: null,
  scheduled_at: null,
  sent_count: 0,
  failed_count: 0,
  delivery_rate: 0,
  created_at: "2026-11-02T10:15:00.000Z",
  started_at: null,
  completed_at: null
}
const started = { ...campaign, total_contacts: 1200, sent_count: 480, delivery_rate: 0.4, started_at: "2026-11-04T09:00:00.000Z" }

export const campaignsReference: GroupReference<typeof CampaignsGroup> = {
  // An A/B test of two subjects over the template's content (issue 30 item 12).
  create: {
    errors: FIELDS,
    request: {
      name: "November news",
      template_id: "tp_4mQ8vR2kT6wX9zB3nC5d",
      from_email: "news@example.org",
      from_name: "Example News",
      list_ids: [LIST_ID],
      variants: [{ subject: "November news" }, { subject: "What is new this November" }],
      ab_test: { test_percent: 20, metric: "opens", wait_minutes: 240 }
    },
    response: {
      ...campaign,
      variants: [
        { subject: "November news", template_id: null, html: null, body_text: null, mjml: null, preheader: null },
        { subject: "What is new this November", template_id: null, html: null, body_text: null, mjml: null, preheader: null }
      ],
      ab_test: { test_percent: 20, metric: "opens", wait_minutes: 240 }
    }
  },
  list: {
    errors: "422 `query_too_expensive` when the read runs past the statement timeout.",
    response: { total: 1, limit: 50, offset: 0, items: [campaign] }
  },
  // A campaign that paused itself (issue 30 item 11): its hard bounces reached HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT.
  read: {
    errors: NOT_FOUND,
    response: {
      ...started,
      status: "paused",
      failed_count: 31,
      pause_reason: "bounce_rate",
      pause_message: "31 hard bounces in 511 final deliveries (6.07 %) reached HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT (5 %): clean the list, then resume"
    }
  },
  update: {
    errors: `${NOT_FOUND} ${STATE} ${FIELDS} 400 \`validation_failed\` (param \`html\`) when html alone is given for a campaign whose mjml compiles it.`,
    request: { name: "November news (final)", preheader: "What changed this month" },
    response: { ...campaign, name: "November news (final)", preheader: "What changed this month" }
  },
  remove: { errors: `${NOT_FOUND} ${STATE}`, response: { id: CAMPAIGN_ID, deleted: true } },
  send: {
    errors: `${NOT_FOUND} ${STATE} 400 \`validation_failed\` (param \`scheduled_at\`) for a date that is not ISO 8601 with a `
      + `time zone, in the past or more than 90 days ahead. ${START}`,
    request: { scheduled_at: "2026-12-01T09:00:00Z" },
    response: { id: CAMPAIGN_ID, status: "scheduled", scheduled_at: "2026-12-01T09:00:00.000Z" }
  },
  pause: { errors: `${NOT_FOUND} ${STATE}`, response: { ...started, status: "paused", pause_reason: "manual" } },
  resume: { errors: `${NOT_FOUND} ${STATE} ${START}`, response: { ...started, status: "sending" } },
  cancel: { errors: `${NOT_FOUND} ${STATE}`, response: { ...started, status: "cancelled" } },
  unschedule: { errors: `${NOT_FOUND} ${STATE}`, response: campaign },
  preview: {
    errors: `${NOT_FOUND} 404 \`not_found\` for a contact the key does not have; 400 \`validation_failed\` (param \`variant\`) `
      + "for a variant the campaign does not have; `render_failed` when its content does not render.",
    request: PREVIEW_REQUEST_EXAMPLE,
    response: PREVIEW_EXAMPLE
  },
  testSend: {
    errors: `${NOT_FOUND} 400 \`recipient_suppressed\` (param \`to[i]\`) for a suppressed address or a blocked domain; `
      + "`validation_failed` (param `from_email`) without a sender, (param `postal_address`) without the key's postal address. "
      + MAILING_ERRORS,
    request: TEST_SEND_REQUEST_EXAMPLE,
    response: TEST_SEND_EXAMPLE
  }
}
