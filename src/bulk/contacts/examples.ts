/** The reference's errors and examples for /v1/bulk/contacts (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { ContactsGroup } from "./Api.ts"

const CONTACT_ID = "ct_8pL3xN6vQ1sT4wY7zA2b"
const NOT_FOUND = "404 `not_found` when this key has no contact `{id}`."
const BY_ADDRESS = "404 `not_found` when this key has no contact of this address; 422 `query_too_expensive` when the read "
  + "runs past the statement timeout."
const METADATA = "400 `validation_failed` (param `metadata`) when metadata is over its size or depth bound."

const contact = {
  id: CONTACT_ID,
  email: "ada@example.org",
  name: "Ada Lovelace",
  status: "active",
  tags: ["customer", "newsletter"],
  metadata: { plan: "pro", city: "London" },
  created_at: "2026-11-02T10:15:00.000Z",
  updated_at: "2026-11-02T10:15:00.000Z",
  lists: [{ list_id: "ls_2kR7mW4pX9vB1nQ6tZ3c", status: "confirmed" }]
}

const CSV = "email,name,tags,city\nada@example.org,Ada Lovelace,customer;newsletter,London\ngrace@example.org,Grace Hopper,,Arlington\n"

export const contactsReference: GroupReference<typeof ContactsGroup> = {
  create: {
    errors: `409 \`conflict\` when this key has a contact with this address already. ${METADATA}`,
    request: { email: "ada@example.org", name: "Ada Lovelace", tags: ["customer", "newsletter"], metadata: { plan: "pro", city: "London" } },
    response: { ...contact, lists: [] }
  },
  list: {
    errors: "422 `query_too_expensive` when the read runs past the statement timeout (narrow it with status, tag, list_id or search).",
    response: { total: 1, limit: 50, offset: 0, items: [contact] }
  },
  import: {
    errors: "400 `validation_failed` (param names it) for a malformed body, option, CSV header or record, a list this key does "
      + "not have (`list_ids`) or metadata over its bound once merged; `invalid_json` or `json_too_complex` for an unreadable JSON "
      + "body (invalid addresses below the gate are left out and reported in `errors`); 413 `payload_too_large` over "
      + "MAX_JSON_MB; 422 `too_many_invalid_recipients` when too many addresses are invalid (nothing imported), "
      + "`query_too_expensive` past the long statement timeout; 429 `rate_limit_exceeded` (Retry-After) when every import "
      + "reader is busy or the per-minute window is full. With list_ids requiring confirmation: 403 `account_suspended`, "
      + "`sending_paused` or `domain_not_verified`, 429 `monthly_quota_exceeded` (nothing imported).",
    request: {
      contacts: [
        { email: "ada@example.org", name: "Ada Lovelace", tags: ["customer"], metadata: { city: "London" } },
        { email: "grace@example.org", name: "Grace Hopper" }
      ],
      list_ids: ["ls_2kR7mW4pX9vB1nQ6tZ3c"],
      tags: ["imported"],
      update_existing: true
    },
    requestAs: { "text/csv": CSV },
    response: { created: 1, updated: 1, skipped: 0, invalid: 0, errors: [], confirmations_queued: 0, confirmations_withheld: 0 }
  },
  importPreview: {
    errors: "422 `query_too_expensive` when the read runs past the long statement timeout.",
    request: { emails: ["ada@example.org", "grace@example.org", "not-an-address"] },
    response: {
      existing: ["ada@example.org"],
      total_unique: 3,
      total_received: 3,
      invalid_syntax: 1,
      invalid: [{ index: 2, email: "not-an-address", reason: "not an email address" }],
      validation_min: 100,
      max_invalid_pct: 10
    }
  },
  read: { errors: NOT_FOUND, response: contact },
  update: {
    errors: `${NOT_FOUND} 409 \`conflict\` when status active is asked for an address that is still suppressed. ${METADATA}`,
    request: { name: "Ada King", tags: ["customer"], metadata: { plan: "enterprise" } },
    response: { ...contact, name: "Ada King", tags: ["customer"], metadata: { plan: "enterprise" }, updated_at: "2026-11-03T08:00:00.000Z" }
  },
  remove: { errors: NOT_FOUND, response: { id: CONTACT_ID, deleted: true } },
  engagement: {
    errors: BY_ADDRESS,
    response: {
      email: "ada@example.org",
      total: 2,
      limit: 50,
      offset: 0,
      items: [
        { type: "clicked", at: "2026-11-04T09:12:00.000Z", campaign_id: "cp_6tV1nB8mK3qW5xZ2pL9d", message_id: "msg_7Hk2Lm9Np3Qr6St1Vw4X", detail: "https://example.org/offer" },
        { type: "opened", at: "2026-11-04T09:10:00.000Z", campaign_id: "cp_6tV1nB8mK3qW5xZ2pL9d", message_id: "msg_7Hk2Lm9Np3Qr6St1Vw4X" }
      ]
    }
  },
  messages: {
    errors: BY_ADDRESS,
    response: {
      total: 1,
      limit: 50,
      offset: 0,
      items: [{ id: "msg_7Hk2Lm9Np3Qr6St1Vw4X", subject: "Our November news", status: "sent", created_at: "2026-11-04T09:00:00.000Z" }]
    }
  }
}
