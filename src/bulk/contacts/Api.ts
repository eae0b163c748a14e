/**
 * /v1/bulk/contacts: contacts of the calling key (REST conventions of shared/DESIGN.md "Rules
 * shared by the bulk issues"), addressed by id or by percent-encoded email; the import (JSON or
 * streamed CSV), its preview that touches nothing, and an address's engagement history.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge, RateLimited, Unprocessable } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { boundedArray, boundedText, IdText, MAX_EMAIL_LENGTH, MAX_LINE_LENGTH, MAX_ID_LENGTH, MAX_METADATA_BYTES, MAX_METADATA_DEPTH, QueryText, queryInt, rawBodyBoundedBy } from "../../http/bounds.ts"
import { RecipientState } from "../../transactional/messages/Api.ts"
import { ImportRequest, MAX_IMPORT_CONTACTS, MAX_LIST_IDS, MAX_TAG_LENGTH, MAX_TAGS, Metadata, Name, Tag, Tags } from "./import-schema.ts"

// Moved to import-schema.ts (the import worker decodes with them); served from here as before.
export { ImportContact, ImportRequest, MAX_IMPORT_CONTACTS, Metadata } from "./import-schema.ts"

const Status = Schema.Literal("active", "unsubscribed", "bounced", "complained")

export const Contact = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  status: Status,
  tags: Schema.Array(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.String,
  updated_at: Schema.String,
  lists: Schema.Array(Schema.Struct({ list_id: Schema.String, status: Schema.Literal("pending", "confirmed", "unsubscribed") }))
}).annotations({ identifier: "Contact" })

const ContactCreate = Schema.Struct({
  email: EmailAddress,
  name: Schema.optional(Schema.NullOr(Name)),
  tags: Schema.optional(Tags),
  metadata: Schema.optional(Metadata)
})

const ContactPatch = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Name)),
  tags: Schema.optional(Tags),
  metadata: Schema.optional(Metadata.annotations({ description: `Replaces the custom fields; at most ${MAX_METADATA_BYTES / 1024} KB as compact JSON, ${MAX_METADATA_DEPTH} levels deep` })),
  status: Schema.optional(Schema.Literal("active", "unsubscribed").annotations({
    description: "unsubscribed applies the whole unsubscribe (account suppression, every contact of the address, contact.unsubscribed); "
      + "active only when no suppression of the address remains (409 otherwise)"
  }))
})

const Limit = Schema.optionalWith(queryInt(1, 200), { default: () => 50 })
const Offset = Schema.optionalWith(queryInt(0), { default: () => 0 })
const ListParams = Schema.Struct({
  status: Schema.optional(Status),
  tag: Schema.optional(Tag),
  list_id: Schema.optional(IdText),
  search: Schema.optional(QueryText.annotations({ description: "Part of the email or name, any case" })),
  limit: Limit,
  offset: Offset
})
const ContactList = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Contact) })

const Flag = Schema.Literal("true", "false", "1", "0")
const ImportQuery = Schema.Struct({
  list_ids: Schema.optional(boundedText(MAX_LIST_IDS * (MAX_ID_LENGTH + 1)).annotations({ description: "CSV body: list ids, comma-separated" })),
  tags: Schema.optional(boundedText(MAX_TAGS * (MAX_TAG_LENGTH + 1)).annotations({ description: "CSV body: tags added to every contact, comma-separated" })),
  update_existing: Schema.optional(Flag),
  confirmed: Schema.optional(Flag)
})

const ImportResult = Schema.Struct({
  created: Schema.Int,
  updated: Schema.Int,
  skipped: Schema.Int.annotations({ description: "Existing contacts left unchanged (update_existing not set)" }),
  invalid: Schema.Int.annotations({ description: "Invalid rows, left out" }),
  errors: Schema.Array(Schema.Struct({ row: Schema.Int, email: Schema.String, reason: Schema.String }))
    .annotations({ description: "The first 100 invalid rows; row counts data rows from 1" }),
  confirmations_queued: Schema.optional(Schema.Int).annotations({ description: "With list_ids: confirmation mails queued for new pending members" }),
  confirmations_withheld: Schema.optional(Schema.Int).annotations({
    description: "With list_ids: new pending members that got no mail because their address had that list's confirmation in the last 24 hours"
  })
}).annotations({ identifier: "ContactImportResult" })

const PreviewEmails = boundedArray(Schema.String.pipe(Schema.maxLength(MAX_LINE_LENGTH)), MAX_IMPORT_CONTACTS)
const PreviewRequest = Schema.Union(Schema.Struct({ emails: PreviewEmails }), PreviewEmails)
const PreviewResponse = Schema.Struct({
  existing: Schema.Array(Schema.String).annotations({ description: "Addresses already contacts of the key, as stored" }),
  total_unique: Schema.Int,
  total_received: Schema.Int,
  invalid_syntax: Schema.Int.annotations({ description: "Unique addresses that are not valid (what the import's gate counts)" }),
  invalid: Schema.Array(Schema.Struct({
    index: Schema.Int.annotations({ description: "0-based position in the submitted rows" }),
    email: Schema.String.annotations({ description: "As submitted, trimmed" }),
    reason: Schema.String.annotations({ description: "As the import reports it: missing email, invalid email syntax" })
  })).annotations({ description: "The first 100 invalid rows, in submitted order (every row, repeats too)" }),
  validation_min: Schema.Int,
  max_invalid_pct: Schema.Number
}).annotations({
  identifier: "ContactImportPreview",
  examples: [{
    existing: ["ada@example.net"],
    total_unique: 3,
    total_received: 4,
    invalid_syntax: 1,
    invalid: [{ index: 2, email: "grace@", reason: "invalid email syntax" }],
    validation_min: 100,
    max_invalid_pct: 10
  }]
})

const Engagement = Schema.Struct({
  email: Schema.String,
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  items: Schema.Array(Schema.Struct({
    type: Schema.Literal("opened", "clicked", "bounced", "complained", "unsubscribed"),
    at: Schema.String,
    campaign_id: Schema.optional(Schema.String),
    sequence_id: Schema.optional(Schema.String),
    message_id: Schema.optional(Schema.String),
    detail: Schema.optional(Schema.String)
  }))
}).annotations({ identifier: "ContactEngagement" })

const ContactMessages = Schema.Struct({
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  items: Schema.Array(Schema.Struct({
    id: Schema.String.annotations({ description: "The message id: GET /v1/mail/messages/{id} shows its timeline, /content what was sent" }),
    subject: Schema.String,
    status: RecipientState.annotations({ description: "Its delivery's state (suppressed: stopped because the address was suppressed meanwhile)" }),
    created_at: Schema.String
  }))
}).annotations({
  identifier: "ContactMessages",
  examples: [{
    total: 2,
    limit: 50,
    offset: 0,
    items: [
      { id: "msg_7Hq2Lm4Np8Rs1Tv5Wx9Z", subject: "November news", status: "sent", created_at: "2026-11-03T09:00:12.000Z" },
      { id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N", subject: "Please confirm your subscription to News", status: "sent", created_at: "2026-10-28T15:41:02.000Z" }
    ]
  }]
})

const Ref = Schema.Struct({ id: boundedText(MAX_EMAIL_LENGTH).annotations({ description: "A contact id (ct_…) or its percent-encoded email" }) })
const ByEmail = Schema.Struct({ email: boundedText(MAX_EMAIL_LENGTH) })

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/contacts").setPayload(ContactCreate).addSuccess(Contact, { status: 201 }).addError(Conflict)
      .annotate(OpenApi.Summary, "Create a contact (an address is unique per key)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bulk/contacts").setUrlParams(ListParams).addSuccess(ContactList)
      .annotate(OpenApi.Summary, "List contacts (filter by status, tag, list_id or search)")
  )
  .add(
    HttpApiEndpoint.post("import", "/v1/bulk/contacts/import")
      .setUrlParams(ImportQuery)
      .setPayload(Schema.Union(
        ImportRequest,
        Schema.String.annotations({ jsonSchema: rawBodyBoundedBy("MAX_JSON_MB") })
          .pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" }))
      ))
      .addSuccess(ImportResult)
      .addError(Unprocessable).addError(PayloadTooLarge).addError(Forbidden).addError(RateLimited)
      .annotate(OpenApi.Summary, "Import contacts from JSON or a CSV body (one transaction)")
      .annotate(OpenApi.Description, "CSV: a header row; columns email, name, tags (separated by `;`), every other column becomes metadata; "
        + "options as query parameters. At or above HERALD_IMPORT_VALIDATION_MIN unique addresses, more than HERALD_IMPORT_MAX_INVALID_PCT "
        + "percent invalid → 422 too_many_invalid_recipients and nothing inserted; below, invalid rows are left out and reported. "
        + "CSV bounds: at most 1,000 header columns (400, param header), 128 KiB per record (400), one non-empty cell per 4 bytes "
        + "of MAX_JSON_MB (413); read within HERALD_IMPORT_PARSE_TIMEOUT_S (400 past it). "
        + "With list_ids, a contact that newly joins a list requiring confirmation is pending and gets one confirmation mail "
        + "(queued in the same transaction, counted against the monthly quota), unless confirmed: true; the send's refusals "
        + "(403 account_suspended, sending_paused, domain_not_verified; 429 monthly_quota_exceeded) then refuse the whole import. "
        + "Such an import (list_ids naming a list requiring confirmation, without confirmed) counts once in the per-minute windows "
        + "like a send (429 rate_limit_exceeded, nothing imported); an address gets at most one confirmation per list in 24 hours, "
        + "also across delete and re-add (the others: confirmations_withheld).")
  )
  .add(
    HttpApiEndpoint.post("importPreview", "/v1/bulk/contacts/import-preview").setPayload(PreviewRequest).addSuccess(PreviewResponse)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "What an import of these addresses would meet (existing contacts, the gate's counts, the invalid rows); touches nothing")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/contacts/:id").setPath(Ref).addSuccess(Contact)
      .annotate(OpenApi.Summary, "A contact with its lists and membership states")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/bulk/contacts/:id").setPath(Ref).setPayload(ContactPatch).addSuccess(Contact).addError(Conflict)
      .annotate(OpenApi.Summary, "Update a contact's name, tags, metadata or status")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/bulk/contacts/:id").setPath(Ref)
      .addSuccess(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({ examples: [{ id: "ct_9Lp3Qx7Vb1Nm5Rt2Kw8Z", deleted: true }] }))
      .annotate(OpenApi.Summary, "Delete a contact (by id or percent-encoded email) with its memberships")
      .annotate(OpenApi.Description, "Each of its running (active or paused) sequence subscriptions is cancelled first, with one "
        + "`sequence.cancelled` (reason `manual`) each; its ended subscriptions stay without it (`contact_id: null`), so a contact "
        + "created again with the same address is not enrolled again into a sequence it ended. Another key's or an unknown contact "
        + "→ 404 not_found. The answer is `{id, deleted: true}`.")
  )
  .add(
    HttpApiEndpoint.get("engagement", "/v1/bulk/contacts/:email/engagement").setPath(ByEmail)
      .setUrlParams(Schema.Struct({ limit: Limit, offset: Offset })).addSuccess(Engagement)
      .annotate(OpenApi.Summary, "The address's history, newest first: bounces, complaints and unsubscribes from any channel; opens and clicks of campaigns")
  )
  .add(
    HttpApiEndpoint.get("messages", "/v1/bulk/contacts/:email/messages").setPath(ByEmail)
      .setUrlParams(Schema.Struct({ limit: Limit, offset: Offset })).addSuccess(ContactMessages).addError(Unprocessable)
      .annotate(OpenApi.Summary, "The bulk messages this key sent to the address (campaigns, sequence steps, confirmations, test-sends), newest first")
      .annotate(OpenApi.Description, "404 when the key has no contact of that address (another key's contact too). Only this key's messages: "
        + "another key's mail to the same address is not listed. A page past HERALD_QUERY_TIMEOUT_MS → 422 query_too_expensive (param offset).")
  )
  // Not found (another key's contact too), conflict (an existing address, a suppressed one made
  // active), the import's refusals: declared once for the group.
  .addError(NotFound)
  .addError(BadRequest)
  .addError(Conflict)
  .addError(Unprocessable)
  .addError(PayloadTooLarge)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Contacts")
{}
