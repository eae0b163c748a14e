/** The reference's errors and examples for /v1/bulk/lists (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { MAILING_ERRORS } from "../reference-errors.ts"
import type { ListsGroup } from "./Api.ts"

const LIST_ID = "ls_2kR7mW4pX9vB1nQ6tZ3c"
const CONTACT_ID = "ct_8pL3xN6vQ1sT4wY7zA2b"
const NOT_FOUND = "404 `not_found` when this key has no list `{id}`."
const MEMBER_NOT_FOUND = "404 `not_found` when this key has no list `{id}` or `{contact}` (a contact id or address) is not its member."

const list = {
  id: LIST_ID,
  name: "Newsletter",
  key_id: "key_5Gh2Jk8Lm1Np4Qr7St0V",
  contact_count: 2,
  created_at: "2026-11-02T10:15:00.000Z",
  require_confirmation: 0,
  confirm_from_email: null,
  confirm_from_name: null,
  confirm_subject: null,
  confirm_intro: null,
  sendable_count: 2,
  pending_count: 0
}

const doubleOptIn = {
  ...list,
  require_confirmation: 1,
  confirm_from_email: "news@example.org",
  confirm_from_name: "Example News",
  confirm_subject: "Please confirm your subscription to {{ list_name }}",
  confirm_intro: "You asked to get our newsletter."
}

export const listsReference: GroupReference<typeof ListsGroup> = {
  create: { errors: "No errors of its own.", request: { name: "Newsletter" }, response: { ...list, contact_count: 0, sendable_count: 0 } },
  list: {
    errors: "422 `query_too_expensive` when the read runs past the statement timeout.",
    response: { total: 1, limit: 50, offset: 0, items: [list] }
  },
  removeMany: {
    errors: "No errors of its own: lists not found, another key's or in use are reported (not_found, forbidden, in_use), "
      + "the others deleted; 400 `validation_failed` for a malformed id.",
    request: { ids: [LIST_ID, "ls_9zX4cV7bN2mQ5wE8rT1y"] },
    response: { deleted: 1, not_found: ["ls_9zX4cV7bN2mQ5wE8rT1y"], forbidden: [], in_use: [], requested: 2 }
  },
  read: { errors: NOT_FOUND, response: list },
  update: { errors: NOT_FOUND, request: { name: "Monthly newsletter" }, response: { ...list, name: "Monthly newsletter" } },
  remove: {
    errors: `${NOT_FOUND} 409 \`conflict\` while a campaign not yet completed uses it, or a saved segment or a sequence's trigger names it (the message names them).`,
    response: { id: LIST_ID, deleted: true }
  },
  confirmation: {
    errors: `${NOT_FOUND} 400 \`validation_failed\` (param \`confirm_from_email\`) when turning it on without `
      + "confirm_from_email or with one whose domain is not verified, `render_failed` when the subject or intro does not compile.",
    request: {
      require_confirmation: true,
      confirm_from_email: "news@example.org",
      confirm_from_name: "Example News",
      confirm_subject: "Please confirm your subscription to {{ list_name }}",
      confirm_intro: "You asked to get our newsletter."
    },
    response: doubleOptIn
  },
  previewConfirmation: {
    errors: `${NOT_FOUND} 400 \`render_failed\` when the subject or intro does not render; 503 \`render_busy\` when every render worker is taken.`,
    response: {
      subject: "Please confirm your subscription to Newsletter",
      html: "<p>You asked to get our newsletter.</p><p><a href=\"https://herald.example.org/confirm/preview\">Confirm</a></p>",
      text: "You asked to get our newsletter.\n\nConfirm: https://herald.example.org/confirm/preview"
    }
  },
  addMembers: {
    errors: `${NOT_FOUND} 400 \`validation_failed\` (param \`contacts[i]\`) for a contact id or address this key does not have. `
      + `On a list requiring confirmation: ${MAILING_ERRORS}`,
    request: { contacts: [CONTACT_ID, "grace@example.org"] },
    response: { ...list, contact_count: 3, sendable_count: 3, confirmations_queued: 0, confirmations_withheld: 0, left_unsubscribed: [] }
  },
  members: {
    errors: `${NOT_FOUND} 422 \`query_too_expensive\` when the read runs past the statement timeout.`,
    response: {
      total: 1,
      limit: 50,
      offset: 0,
      items: [{
        id: CONTACT_ID,
        email: "ada@example.org",
        name: "Ada Lovelace",
        status: "active",
        tags: ["customer"],
        metadata: { city: "London" },
        created_at: "2026-11-02T10:15:00.000Z",
        updated_at: "2026-11-02T10:15:00.000Z",
        lists: [{ list_id: LIST_ID, status: "confirmed" }],
        membership_status: "confirmed"
      }]
    }
  },
  removeMember: { errors: MEMBER_NOT_FOUND, response: { id: CONTACT_ID, deleted: true } },
  resendConfirmation: {
    errors: `${MEMBER_NOT_FOUND} 409 \`conflict\` when the member is not pending or the list does not require confirmation; `
      + "429 `confirmation_recently_sent` (Retry-After) inside 24 hours of the last one; 400 `recipient_suppressed` (param "
      + `\`contact\`) for a suppressed or inactive address. ${MAILING_ERRORS}`,
    response: { id: CONTACT_ID, list_id: LIST_ID, email: "ada@example.org", confirmation_sent_at: "2026-11-03T08:00:00.000Z" }
  },
  resendConfirmationQueued: {
    errors: `${MEMBER_NOT_FOUND} 409 \`conflict\` when the member is not pending; 429 \`confirmation_recently_sent\` `
      + `(Retry-After) inside 24 hours of the last one. ${MAILING_ERRORS}`,
    response: { queued: true }
  }
}
