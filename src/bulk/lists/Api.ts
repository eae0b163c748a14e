/**
 * /v1/bulk/lists: lists of the calling key (REST conventions of shared/DESIGN.md "Rules shared by
 * the bulk issues"), their members (by contact id or percent-encoded email), the confirmation
 * settings, and the delete of several lists at once with its report.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { BadRequest, Conflict, Forbidden, NotFound, RateLimited, Unprocessable } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { Contact } from "../contacts/Api.ts"
import { boundedArray, boundedText, IdText, MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, queryInt } from "../../http/bounds.ts"

const Name = boundedText(MAX_NAME_LENGTH, { trim: true, minLength: 1 })
const Setting = boundedText(2000)

export const List = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_id: Schema.String,
  contact_count: Schema.Int,
  created_at: Schema.String,
  require_confirmation: Schema.Literal(0, 1).annotations({ description: "1 when the list requires double opt-in" }),
  confirm_from_email: Schema.NullOr(Schema.String),
  confirm_from_name: Schema.NullOr(Schema.String),
  confirm_subject: Schema.NullOr(Schema.String),
  confirm_intro: Schema.NullOr(Schema.String),
  sendable_count: Schema.Int.annotations({ description: "Confirmed members whose contact is active and whose address is on no suppression list" }),
  pending_count: Schema.Int.annotations({ description: "Members still to confirm" })
}).annotations({ identifier: "List" })

const Limit = Schema.optionalWith(queryInt(1, 200), { default: () => 50 })
const Offset = Schema.optionalWith(queryInt(0), { default: () => 0 })

const ListPage = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(List) })
const Member = Schema.extend(Contact, Schema.Struct({ membership_status: Schema.Literal("pending", "confirmed", "unsubscribed") }))
  .annotations({ identifier: "ListMember" })
const MemberPage = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Member) })

/** The members call's answer: the list, and what the call did about confirmation mail. */
const MembersAdded = Schema.extend(List, Schema.Struct({
  confirmations_queued: Schema.Int.annotations({ description: "Confirmation mails this call queued" }),
  confirmations_withheld: Schema.Int.annotations({
    description: "New pending members that got no mail because their address had this list's confirmation in the last 24 hours"
  }),
  left_unsubscribed: Schema.Array(Schema.String).annotations({
    description: "Contacts given that had unsubscribed from this list: they stay `unsubscribed` (only the person can opt back in; "
      + "on a list that requires confirmation they are `pending` again instead, with a confirmation mail)"
  })
})).annotations({ identifier: "ListMembersAdded" })

const ConfirmationResent = Schema.Struct({
  id: Schema.String.annotations({ description: "The contact" }),
  list_id: Schema.String,
  email: Schema.String,
  confirmation_sent_at: Schema.String
}).annotations({ identifier: "ListConfirmationResent" })

/** The issue-30 form of the resend (item 6): queued, nothing more to say. */
const ConfirmationQueued = Schema.Struct({ queued: Schema.Literal(true) }).annotations({
  identifier: "ListConfirmationQueued",
  examples: [{ queued: true }]
})

const MembersAdd = Schema.Struct({
  contacts: boundedArray(boundedText(MAX_EMAIL_LENGTH), 1000).pipe(Schema.minItems(1)).annotations({
    description: "Contact ids or email addresses; an address not yet a contact of the key becomes one"
  })
})

const Confirmation = Schema.Struct({
  require_confirmation: Schema.Boolean,
  confirm_from_email: Schema.optional(Schema.NullOr(EmailAddress)).annotations({ description: "Required with require_confirmation: true; its domain verified for the account" }),
  confirm_from_name: Schema.optional(Schema.NullOr(Setting)),
  confirm_subject: Schema.optional(Schema.NullOr(Setting)).annotations({ description: "Default: `Please confirm your subscription to <list name>`" }),
  confirm_intro: Schema.optional(Schema.NullOr(Setting)).annotations({
    description: "Default: `You asked to receive mail from <list name>. Confirm with the button below; if you did not ask, ignore this message and nothing will be sent.`"
  })
})

const Ids = boundedArray(IdText, 1000)
const DeleteRequest = Schema.Union(Ids, Schema.Struct({ ids: Ids }))
const DeleteReport = Schema.Struct({
  deleted: Schema.Int,
  not_found: Schema.Array(Schema.String).annotations({ description: "Unknown, or another account's" }),
  forbidden: Schema.Array(Schema.String).annotations({ description: "Lists of another key of the same account" }),
  in_use: Schema.Array(Schema.String).annotations({ description: "Referenced by a saved segment or a campaign: not deleted" }),
  requested: Schema.Int
}).annotations({ identifier: "ListDeleteReport" })

const CONFIRMATION_DESCRIPTION = "With require_confirmation, every contact that newly joins the list (this API, or an import with "
  + "list_ids unless confirmed: true) becomes a pending member and gets one confirmation mail, queued with the call: from "
  + "confirm_from_email / confirm_from_name, subject confirm_subject, confirm_intro and a link to {HERALD_BASE_URL}/confirm/<token> "
  + "(valid 7 days). confirm_subject and confirm_intro are templates of the rendering engine (text; variables: email, name, "
  + "metadata.*, list_name, account_name, request_date, confirm_url); one that does not compile → 400 render_failed. The mail ends "
  + "with a fixed line naming the account, the list and the date of the request. The link opens a page with two buttons: "
  + "confirm (its POST confirms the membership and emits contact.confirmed once) and \"I did not ask for this\" (its POST "
  + "unsubscribes the address from all the account's mail, suppression source not-me); a GET alone changes nothing."
const ADD_MEMBERS_DESCRIPTION = "On a list that requires confirmation, each new member is pending and gets one confirmation mail "
  + "(bulk channel, counted against the monthly quota), queued before the answer; re-adding a pending member sends nothing again. "
  + "A suppressed address, one on a blocked domain, or a contact that is not active gets no mail and stays pending. "
  + "The send's refusals apply: 403 account_suspended, sending_paused or domain_not_verified (the confirm_from_email's domain), "
  + "429 monthly_quota_exceeded, 400 overage_not_offered; then nothing is added. "
  + "Mail others trigger is bounded: a call on a list requiring confirmation counts once in the key's and the account's per-minute "
  + "windows like a send (over it: 429 rate_limit_exceeded, nothing added), and an address gets at most one confirmation per list "
  + "in 24 hours, also across delete and re-add: a member added again inside it is pending without mail, counted in confirmations_withheld."
const RESEND_DESCRIPTION = "The confirmation mail again, to a pending member of a list requiring confirmation (not pending → 409). "
  + "At most one per address and list in 24 hours: inside it → 429 confirmation_recently_sent with Retry-After (seconds). Counts "
  + "in the per-minute windows like a send (429 rate_limit_exceeded) and against the monthly quota; a suppressed address, one on a "
  + "blocked domain or a contact that is not active → 400 recipient_suppressed (param contact)."

const ConfirmationPreview = Schema.Struct({
  subject: Schema.String,
  html: Schema.String,
  text: Schema.String
}).annotations({
  identifier: "ListConfirmationPreview",
  description: "The confirmation mail as a new member (new.member@example.com, no name, no fields) would get it; its link is a placeholder "
    + "({HERALD_BASE_URL}/confirm/preview) that confirms nothing",
  examples: [{
    subject: "Please confirm your subscription to News",
    html: "<!doctype html>\n<html><body style=\"font-family:system-ui,sans-serif;line-height:1.5\">\n<p style=\"white-space:pre-line\">You asked to "
      + "receive mail from News. …</p>\n<p><a href=\"https://mail.example.org/confirm/preview\" …>Confirm my subscription</a></p>\n…</body></html>",
    text: "You asked to receive mail from News. …\n\nConfirm your subscription: https://mail.example.org/confirm/preview\n\nThis request was made on "
      + "2026-11-28 10:33 UTC through Example for the list \"News\". …\n"
  }]
})

const ById = Schema.Struct({ id: IdText })
const MemberRef = Schema.Struct({ id: IdText, contact: boundedText(MAX_EMAIL_LENGTH).annotations({ description: "A contact id (ct_…) or its percent-encoded email" }) })
const Deleted = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })

export class ListsGroup extends HttpApiGroup.make("lists")
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/lists").setPayload(Schema.Struct({ name: Name })).addSuccess(List, { status: 201 })
      .annotate(OpenApi.Summary, "Create a list")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bulk/lists").setUrlParams(Schema.Struct({ limit: Limit, offset: Offset })).addSuccess(ListPage).addError(Unprocessable)
      .annotate(OpenApi.Summary, "List the key's lists with their member counts")
  )
  .add(
    HttpApiEndpoint.post("removeMany", "/v1/bulk/lists/delete").setPayload(DeleteRequest).addSuccess(DeleteReport)
      .annotate(OpenApi.Summary, "Delete several lists in one transaction; the others are reported")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/lists/:id").setPath(ById).addSuccess(List)
      .annotate(OpenApi.Summary, "A list with its member counts and double opt-in settings")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/bulk/lists/:id").setPath(ById).setPayload(Schema.Struct({ name: Schema.optional(Name) })).addSuccess(List)
      .annotate(OpenApi.Summary, "Rename a list")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/bulk/lists/:id").setPath(ById).addSuccess(Deleted)
      .annotate(OpenApi.Summary, "Delete a list (409 while a campaign not yet completed uses it)")
  )
  .add(
    HttpApiEndpoint.put("confirmation", "/v1/bulk/lists/:id/confirmation").setPath(ById).setPayload(Confirmation).addSuccess(List)
      .annotate(OpenApi.Summary, "Double opt-in settings: on, existing members stay confirmed; off, pending members become confirmed")
      .annotate(OpenApi.Description, CONFIRMATION_DESCRIPTION)
  )
  .add(
    HttpApiEndpoint.post("previewConfirmation", "/v1/bulk/lists/:id/confirmation/preview").setPath(ById)
      .addSuccess(ConfirmationPreview)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "The confirmation mail as a new member would get it (the list's subject and intro, or their defaults), with a placeholder link; sends nothing")
      .annotate(OpenApi.Description, "Rendered by the code that renders the real mail, in the render workers (a subject or intro that does not "
        + "compile → 400 render_failed naming it). Works whether or not the list requires confirmation. Takes no body (one sent, such as {}, is not read).")
  )
  .add(
    HttpApiEndpoint.post("addMembers", "/v1/bulk/lists/:id/contacts").setPath(ById).setPayload(MembersAdd).addSuccess(MembersAdded)
      .addError(Forbidden).addError(RateLimited)
      .annotate(OpenApi.Summary, "Add members by contact id or email (pending when the list requires confirmation)")
      .annotate(OpenApi.Description, ADD_MEMBERS_DESCRIPTION)
  )
  .add(
    HttpApiEndpoint.get("members", "/v1/bulk/lists/:id/contacts").setPath(ById)
      .setUrlParams(Schema.Struct({ status: Schema.optional(Schema.Literal("pending", "confirmed", "unsubscribed")), limit: Limit, offset: Offset }))
      .addSuccess(MemberPage)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "List a list's members with their membership state (pending, confirmed)")
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/v1/bulk/lists/:id/contacts/:contact").setPath(MemberRef).addSuccess(Deleted)
      .annotate(OpenApi.Summary, "Remove a contact from a list (the contact stays)")
  )
  .add(
    HttpApiEndpoint.post("resendConfirmation", "/v1/bulk/lists/:id/contacts/:contact/resend").setPath(MemberRef).addSuccess(ConfirmationResent)
      .addError(Forbidden).addError(RateLimited)
      .annotate(OpenApi.Summary, "Send a pending member's confirmation mail again (at most one per address and list in 24 hours)")
      .annotate(OpenApi.Description, RESEND_DESCRIPTION)
  )
  .add(
    HttpApiEndpoint.post("resendConfirmationQueued", "/v1/bulk/lists/:id/contacts/:contact/resend-confirmation").setPath(MemberRef)
      .addSuccess(ConfirmationQueued, { status: 202 })
      .addError(Forbidden).addError(RateLimited)
      .annotate(OpenApi.Summary, "Send a pending member's confirmation mail again, e.g. once its 7-day link has expired → 202 {queued: true}")
      .annotate(OpenApi.Description, `{contact} is a contact id (ct_…) or its percent-encoded email. Takes no body. Another key's list or `
        + `contact, or one not on the list → 404 not_found. ${RESEND_DESCRIPTION} The mail carries a new link, valid 7 days.`)
  )
  // Not found (another key's list too), conflict (a list in use), refused settings or members.
  .addError(NotFound)
  .addError(BadRequest)
  .addError(Conflict)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Lists")
{}
