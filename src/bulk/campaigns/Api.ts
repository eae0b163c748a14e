/**
 * /v1/bulk/campaigns: campaigns of the calling key (REST conventions of shared/DESIGN.md "Rules
 * shared by the bulk issues") and their actions: send (now or scheduled), unschedule, pause, resume, cancel.
 * The state table (states.ts) is the OpenAPI description of the group.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge, RateLimited, Unprocessable } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { CAMPAIGN_STATUSES, PAUSE_REASONS, STATE_TABLE } from "./states.ts"
import { boundedArray, boundedText, ContentText, IdText, LineText, MAX_DATE_LENGTH, MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, queryInt } from "../../http/bounds.ts"

const Name = boundedText(MAX_NAME_LENGTH, { trim: true, minLength: 1 })
const Short = LineText
const Ids = boundedArray(IdText, 100)

/** One A/B variant: a subject, and optionally its own content or template (issue 30 item 12). */
const VariantInput = Schema.Struct({
  subject: Short,
  template_id: Schema.optional(Schema.NullOr(IdText)),
  html: Schema.optional(Schema.NullOr(ContentText)),
  body_text: Schema.optional(Schema.NullOr(ContentText)),
  mjml: Schema.optional(Schema.NullOr(ContentText)),
  preheader: Schema.optional(Schema.NullOr(Short))
}).annotations({
  identifier: "CampaignVariantInput",
  description: "A subject, and optionally its own html/body_text/mjml (and preheader) or its own template_id; with a subject alone, "
    + "the campaign's template's content"
})
const Variants = boundedArray(VariantInput, 4).pipe(Schema.minItems(2)).annotations({
  description: "2 to 4 variants, sent with ab_test; the campaign's own subject, html, body_text, mjml and preheader must then be null"
})
const AbTestInput = Schema.Struct({
  test_percent: Schema.Int.pipe(Schema.between(10, 50)).annotations({ description: "The share of the recipients in the test, split evenly at random across the variants" }),
  metric: Schema.Literal("opens", "clicks").annotations({ description: "The unique rate that picks the winner (ties: the first variant)" }),
  wait_minutes: Schema.Int.pipe(Schema.between(30, 4320)).annotations({ description: "How long after the test share is queued the winner is decided" })
}).annotations({ identifier: "CampaignAbTest" })

export const Campaign = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.Literal(...CAMPAIGN_STATUSES),
  pause_reason: Schema.NullOr(Schema.Literal(...PAUSE_REASONS)).annotations({
    description: "Why a paused campaign is paused: content_incomplete when it came due with its segment or template deleted, or "
      + "its content without a subject, sender or body (pause_message says which); quota_exhausted also when it came due with "
      + "more recipients than the quota has left; bounce_rate / complaint_rate when its hard bounces or complaints reached "
      + "HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT / HERALD_CAMPAIGN_COMPLAINT_PAUSE_PCT of its final deliveries (resume continues; "
      + "judged again after another HERALD_CAMPAIGN_PAUSE_MIN)"
  }),
  pause_message: Schema.NullOr(Schema.String).annotations({ description: "What the pause is about when the appliance paused it, e.g. the missing part; null otherwise" }),
  template_id: Schema.NullOr(Schema.String).annotations({ description: "The template whose content is sent (its content is frozen when sending starts)" }),
  subject: Schema.NullOr(Schema.String),
  html: Schema.NullOr(Schema.String),
  body_text: Schema.NullOr(Schema.String),
  mjml: Schema.NullOr(Schema.String).annotations({ description: "MJML source; when present, html is compiled from it on save" }),
  preheader: Schema.NullOr(Schema.String),
  from_email: Schema.NullOr(Schema.String),
  from_name: Schema.NullOr(Schema.String),
  reply_to: Schema.NullOr(Schema.String),
  sender: Schema.Struct({
    from_email: Schema.NullOr(Schema.String),
    from_name: Schema.NullOr(Schema.String),
    reply_to: Schema.NullOr(Schema.String)
  }).annotations({
    description: "The sender the campaign's mail goes out with: its own from_email, from_name and reply_to over its " +
      "template's (null fields above mean \"the template's\"); once sending started, what its content was frozen with"
  }),
  list_ids: Schema.Array(Schema.String),
  segment_id: Schema.NullOr(Schema.String).annotations({ description: "With list_ids, narrows them; alone, runs over every contact of the key" }),
  variants: Schema.NullOr(Schema.Array(Schema.Struct({
    subject: Schema.String,
    template_id: Schema.NullOr(Schema.String),
    html: Schema.NullOr(Schema.String),
    body_text: Schema.NullOr(Schema.String),
    mjml: Schema.NullOr(Schema.String),
    preheader: Schema.NullOr(Schema.String)
  }))).annotations({ description: "The A/B variants (index 0 to 3), or null for one content; see ab_test" }),
  ab_test: Schema.NullOr(AbTestInput).annotations({
    description: "With variants: the test share goes out split across them, and after wait_minutes the variant with the higher unique "
      + "rate goes to the rest (GET /v1/bulk/campaigns/{id}/analytics: variants and winner). The campaign stays sending meanwhile"
  }),
  total_contacts: Schema.NullOr(Schema.Int).annotations({ description: "Recipients frozen when sending started; null before" }),
  scheduled_at: Schema.NullOr(Schema.String),
  sent_count: Schema.Int,
  failed_count: Schema.Int,
  delivery_rate: Schema.Number.annotations({ description: "sent_count / total_contacts, 4 decimals; 0 without contacts" }),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "Campaign",
  examples: [{
    id: "cp_7Hq2Lm9Xv4Rt1Ws8Kd3N",
    name: "December news",
    status: "draft",
    pause_reason: null,
    pause_message: null,
    template_id: null,
    subject: "What is new in December, {{ name }}",
    html: "<p>Hello {{ name }}</p><p><a href=\"{{ unsubscribe_url }}\">Unsubscribe</a></p>",
    body_text: null,
    mjml: null,
    preheader: null,
    from_email: "news@example.com",
    from_name: "Example News",
    reply_to: null,
    sender: { from_email: "news@example.com", from_name: "Example News", reply_to: null },
    list_ids: ["ls_4Tg8Hk2Mn6Pq1Rs5Vw9X"],
    segment_id: null,
    variants: null,
    ab_test: null,
    total_contacts: null,
    scheduled_at: null,
    sent_count: 0,
    failed_count: 0,
    delivery_rate: 0,
    created_at: "2026-11-28T10:00:00.000Z",
    started_at: null,
    completed_at: null
  }]
})

const contentFields = {
  template_id: Schema.NullOr(IdText),
  subject: Schema.NullOr(Short),
  html: Schema.NullOr(ContentText),
  body_text: Schema.NullOr(ContentText),
  mjml: Schema.NullOr(ContentText),
  preheader: Schema.NullOr(Short),
  from_email: Schema.NullOr(EmailAddress),
  from_name: Schema.NullOr(Short),
  reply_to: Schema.NullOr(EmailAddress),
  list_ids: Ids,
  segment_id: Schema.NullOr(IdText),
  variants: Schema.NullOr(Variants),
  ab_test: Schema.NullOr(AbTestInput)
}

const optionalContent = {
  template_id: Schema.optional(contentFields.template_id),
  subject: Schema.optional(contentFields.subject),
  html: Schema.optional(contentFields.html),
  body_text: Schema.optional(contentFields.body_text),
  mjml: Schema.optional(contentFields.mjml),
  preheader: Schema.optional(contentFields.preheader),
  from_email: Schema.optional(contentFields.from_email),
  from_name: Schema.optional(contentFields.from_name),
  reply_to: Schema.optional(contentFields.reply_to),
  list_ids: Schema.optional(contentFields.list_ids),
  segment_id: Schema.optional(contentFields.segment_id),
  variants: Schema.optional(contentFields.variants),
  ab_test: Schema.optional(contentFields.ab_test)
}
const CampaignCreate = Schema.Struct({ name: Name, ...optionalContent })
const CampaignPatch = Schema.Struct({ name: Schema.optional(Name), ...optionalContent })

const ListParams = Schema.Struct({
  limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
})
const CampaignPage = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Campaign) })

/** The body is optional: none (read as null), `{}` or `{scheduled_at: null}` send now. */
const SendRequest = Schema.NullOr(Schema.Struct({
  scheduled_at: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_DATE_LENGTH)))).annotations({
    description: "ISO 8601 date-time with a time zone, in the future (60 s of clock skew allowed), at most 90 days ahead; omit to send now"
  }),
  allow_partial: Schema.optional(Schema.Boolean).annotations({
    description: "Without overage, start even when the monthly quota left cannot cover every recipient: the campaign pauses with "
      + "quota_exhausted when it runs out. Default false: such a send → 400 overage_not_offered, nothing changed"
  })
}).annotations({ identifier: "CampaignSendRequest", examples: [{ scheduled_at: "2026-12-01T09:00:00Z" }, { allow_partial: true }] }))
const SendResponse = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("sending", "scheduled"),
  total_contacts: Schema.optional(Schema.Int).annotations({ description: "Only when status is sending" }),
  scheduled_at: Schema.optional(Schema.String).annotations({ description: "Only when status is scheduled" })
}).annotations({ identifier: "CampaignSendResponse", examples: [{ id: "cp_7Hq2Lm9Xv4Rt1Ws8Kd3N", status: "sending", total_contacts: 1250 }] })

/** The examples the reference shows for preview and test-send (the schemas and examples.ts use these). */
export const PREVIEW_REQUEST_EXAMPLE = { contact: "ada@example.org" } as const
export const PREVIEW_EXAMPLE = {
  subject: "November news for Ada",
  html: "<html><body><p>Hi Ada</p><a href=\"https://example.org/offer\">Offer</a></body></html>",
  body_text: "Hi Ada\n\nOffer (https://example.org/offer)"
} as const
export const TEST_SEND_REQUEST_EXAMPLE = { to: ["me@example.org", "boss@example.org"], contact: "ada@example.org" } as const
export const TEST_SEND_EXAMPLE = {
  ok: true,
  message_ids: ["msg_3Fh7Jk1Lm5Np9Qr2St6V", "msg_8Bc2Df6Gh0Jk4Lm7Np1Q"],
  to: ["me@example.org", "boss@example.org"]
} as const

/** Which A/B variant to show (issue 30 item 12); a campaign without variants refuses any (400 `param: variant`). */
const ContactRef = boundedText(MAX_EMAIL_LENGTH)
const Variant = Schema.Int.pipe(Schema.between(0, 3))
const PreviewRequest = Schema.Struct({
  contact: ContactRef.annotations({ description: "The id or the email address of one of the key's contacts (404 otherwise)" }),
  variant: Schema.optional(Variant)
}).annotations({ identifier: "CampaignPreviewRequest", examples: [PREVIEW_REQUEST_EXAMPLE] })
const PreviewResponse = Schema.Struct({
  subject: Schema.String,
  html: Schema.String.annotations({ description: "Empty for a text-only campaign" }),
  body_text: Schema.String
}).annotations({
  identifier: "CampaignPreview",
  examples: [PREVIEW_EXAMPLE]
})
const TestSendRequest = Schema.Struct({
  to: boundedArray(EmailAddress, 5).pipe(Schema.minItems(1)).annotations({ description: "1 to 5 addresses; each gets its own message" }),
  contact: Schema.optional(ContactRef).annotations({ description: "Render with this contact's variables (id or email); without it, the first address is the only variable" }),
  variant: Schema.optional(Variant)
}).annotations({ identifier: "CampaignTestSendRequest", examples: [TEST_SEND_REQUEST_EXAMPLE] })
const TestSendResponse = Schema.Struct({
  ok: Schema.Literal(true),
  message_ids: Schema.Array(Schema.String).annotations({ description: "One per address of `to`, in its order" }),
  to: Schema.Array(Schema.String)
}).annotations({
  identifier: "CampaignTestSendResponse",
  examples: [TEST_SEND_EXAMPLE]
})

const ById = Schema.Struct({ id: IdText })
const Deleted = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })

export class CampaignsGroup extends HttpApiGroup.make("campaigns")
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/campaigns").setPayload(CampaignCreate).addSuccess(Campaign, { status: 201 })
      .annotate(OpenApi.Summary, "Create a draft campaign: a template_id or inline content, a sender, and list_ids and/or a segment_id")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bulk/campaigns").setUrlParams(ListParams).addSuccess(CampaignPage).addError(Unprocessable)
      .annotate(OpenApi.Summary, "List the key's campaigns, newest first")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/campaigns/:id").setPath(ById).addSuccess(Campaign)
      .annotate(OpenApi.Summary, "A campaign with its state and counts")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/bulk/campaigns/:id").setPath(ById).setPayload(CampaignPatch).addSuccess(Campaign)
      .annotate(OpenApi.Summary, "Update some fields of a draft")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/bulk/campaigns/:id").setPath(ById).addSuccess(Deleted)
      .annotate(OpenApi.Summary, "Delete a draft, completed or cancelled campaign")
  )
  .add(
    HttpApiEndpoint.post("send", "/v1/bulk/campaigns/:id/send").setPath(ById).setPayload(SendRequest).addSuccess(SendResponse)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "Send now (the recipient set is frozen) or at scheduled_at")
      .annotate(OpenApi.Description, "Counts against the per-minute rate limit. The send endpoint's refusals apply with its codes: "
        + "an unverified sender domain (403 domain_not_verified), a suspended or paused account (403), the monthly quota used up (429). "
        + "Without overage, a send now whose recipients not yet sent (simulator addresses are free) exceed what is left of the "
        + "monthly quota → 400 overage_not_offered (the message states what is needed and what remains), nothing changed, unless "
        + "`allow_partial: true`; a scheduled campaign in that state pauses with `pause_reason: quota_exhausted` when it comes due. "
        + "The check is advisory: two campaigns checked at once may both pass, and a later shortfall pauses as before. "
        + "An A/B campaign whose test share gives a variant fewer than 10 recipients → 400 `validation_failed`, "
        + "`param: ab_test.test_percent`; during its wait it stays `sending`.\n\n"
        + STATE_TABLE)
  )
  .add(
    HttpApiEndpoint.post("pause", "/v1/bulk/campaigns/:id/pause").setPath(ById).addSuccess(Campaign)
      .annotate(OpenApi.Summary, "Pause a sending or scheduled campaign: queued deliveries not yet attempted are held")
  )
  .add(
    HttpApiEndpoint.post("resume", "/v1/bulk/campaigns/:id/resume").setPath(ById).addSuccess(Campaign).addError(Unprocessable)
      .annotate(OpenApi.Summary, "Resume a paused campaign with its frozen recipient set (the send refusals apply)")
      .annotate(OpenApi.Description, "Takes no body. A campaign paused before it started whose `scheduled_at` is still ahead goes back "
        + "to `scheduled` and starts at its time; otherwise it goes to `sending` at once. Not `paused` → 409 conflict; another key's "
        + "campaign → 404. The send's refusals apply (403 account_suspended, sending_paused, domain_not_verified; 429 "
        + "monthly_quota_exceeded or rate_limit_exceeded). The answer is the campaign.")
  )
  .add(
    HttpApiEndpoint.post("unschedule", "/v1/bulk/campaigns/:id/unschedule").setPath(ById).addSuccess(Campaign)
      .annotate(OpenApi.Summary, "Take a scheduled campaign off its schedule: back to draft, scheduled_at cleared, editable again")
      .annotate(OpenApi.Description, "Takes no body. Only from `scheduled`: any other state → 409 conflict, nothing changed; "
        + "another key's campaign → 404 not_found. Nothing was frozen or queued before the start, so nothing else is undone; "
        + "`PATCH` it, then `send` it again (now or with a new `scheduled_at`). The answer is the campaign, `status: \"draft\"`, "
        + "`scheduled_at: null`.")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/bulk/campaigns/:id/cancel").setPath(ById).addSuccess(Campaign)
      .annotate(OpenApi.Summary, "Cancel: deliveries not yet attempted are dropped; no campaign.completed")
  )
  .add(
    HttpApiEndpoint.post("preview", "/v1/bulk/campaigns/:id/preview").setPath(ById).setPayload(PreviewRequest).addSuccess(PreviewResponse)
      .annotate(OpenApi.Summary, "The subject, html and text one contact would get, links untracked; sends and saves nothing")
      .annotate(OpenApi.Description, "The campaign's content as it is now (its template's as it is at this moment, or its own), rendered "
        + "with the contact's variables and their own unsubscribe link, with the footer it would get. Any state. Errors: 404 `not_found` for "
        + "another key's campaign or contact; 400 `validation_failed` (`param: variant` for a variant the campaign does not have: "
        + "an A/B campaign shows variant 0 without it; "
        + "`template_id` when its template is gone); 400 `render_failed` when the content does not render.")
  )
  .add(
    HttpApiEndpoint.post("testSend", "/v1/bulk/campaigns/:id/test-send").setPath(ById).setPayload(TestSendRequest).addSuccess(TestSendResponse)
      .annotate(OpenApi.Summary, "Send the campaign as a contact would get it to 1–5 addresses ([Test] subject, no tracking, no events)")
      .annotate(OpenApi.Description, "The template test-send's path: answered once the messages are queued; counts once in the per-minute "
        + "window and each address (but simulator ones) against the monthly quota; the unsubscribe link is redacted. Errors: 404 `not_found` "
        + "(campaign or contact); 400 `recipient_suppressed` with `param: to[i]`; 400 `validation_failed` (`from_email` when there is no "
        + "sender, `variant`, `to`); 400 `render_failed`; 403 `domain_not_verified` or a suspended or paused account; 429 the rate window "
        + "or the quota.")
  )
  // Not found (another key's campaign too), conflict (a call the state forbids), bad content or
  // date, and the send endpoint's refusals: declared once for the group.
  .addError(NotFound)
  .addError(Conflict)
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(RateLimited)
  .addError(PayloadTooLarge)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Campaigns")
  .annotate(OpenApi.Description, `Campaigns and their states.\n\n${STATE_TABLE}`)
{}
