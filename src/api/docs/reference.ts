/**
 * Every group's errors-in-words and examples (each area's examples.ts), gathered for the documents
 * (documents.ts applies them with src/http/reference.ts's withReference). A group added to an area's
 * API gets its entry here; test/http/reference-examples.test.ts fails for an operation without one.
 */
import type { ApiReference } from "../../http/reference.ts"
import { metaReference } from "../meta/examples.ts"
import { adminInboundReference } from "../../inbound/admin/examples.ts"
import { adminQueueReference } from "../../mta/overview/examples.ts"
import { adminReference } from "../../platform/admin/examples.ts"
import { adminBlockedDomainsReference, adminSuppressionsReference } from "../../platform/suppressions/admin-examples.ts"
import { dmarcReference } from "../../platform/dmarc/examples.ts"
import { adminTicketsReference, ticketsReference } from "../../platform/tickets/examples.ts"
import { webhooksReference } from "../../webhooks/examples.ts"
import { domainsReference } from "../../platform/domains/examples.ts"
import { keysReference } from "../../platform/keys/examples.ts"
import { plansReference } from "../../platform/plans/examples.ts"
import { subscriptionsReference } from "../../platform/subscriptions/examples.ts"
import { suppressionsReference } from "../../platform/suppressions/examples.ts"
import { usageReference } from "../../platform/usage/examples.ts"
import { statsReference } from "../../transactional/stats/examples.ts"
import { auditReference } from "../../transactional/audit/examples.ts"
import { messagesReference } from "../../transactional/messages/examples.ts"
import { scheduledReference } from "../../transactional/scheduled/examples.ts"
import { sendReference } from "../../transactional/send/examples.ts"
import { contactsReference } from "../../bulk/contacts/examples.ts"
import { listsReference } from "../../bulk/lists/examples.ts"
import { segmentsReference } from "../../bulk/segments/examples.ts"
import { campaignsReference } from "../../bulk/campaigns/examples.ts"
import { analyticsReference } from "../../bulk/analytics/examples.ts"
import { sequencesReference } from "../../bulk/sequences/examples.ts"
import { templatesReference } from "../../bulk/templates/examples.ts"
import { settingsReference } from "../../bulk/settings/examples.ts"

/** The errors any operation can answer: stated once in each document's description. */
export const COMMON_ERRORS = [
  "Errors every operation can answer, in the envelope `{\"error\": {\"type\", \"code\", \"message\", \"param\"?}}`:",
  "400 `validation_failed` (a field, parameter or path parameter out of its schema; `param` names it), `invalid_json` or",
  "`json_too_complex` (an unreadable body); 401 `unauthorized` (a missing, unknown or revoked key; not on /health and",
  "/version); 403 `forbidden` (an administrator's endpoint with a client key, or a console cookie request without its",
  "CSRF token); 404 `not_found` (an unknown route); 405 `method_not_allowed`; 413 `payload_too_large` (a body over its",
  "bound) or 408 `upload_too_slow`; 429 `rate_limit_exceeded` with Retry-After (an address that sent too many invalid",
  "keys this minute); 500 `internal_error`. Each operation's description states the errors of its own."
].join(" ")

export const REFERENCE: ApiReference = {
  meta: metaReference,
  send: sendReference,
  scheduled: scheduledReference,
  audit: auditReference,
  messages: messagesReference,
  templates: templatesReference,
  contacts: contactsReference,
  lists: listsReference,
  segments: segmentsReference,
  campaigns: campaignsReference,
  analytics: analyticsReference,
  sequences: sequencesReference,
  settings: settingsReference,
  keys: keysReference,
  domains: domainsReference,
  suppressions: suppressionsReference,
  usage: usageReference,
  stats: statsReference,
  plans: plansReference,
  subscriptions: subscriptionsReference,
  tickets: ticketsReference,
  webhooks: webhooksReference,
  dmarc: dmarcReference,
  admin: adminReference,
  adminTickets: adminTicketsReference,
  adminSuppressions: adminSuppressionsReference,
  adminBlockedDomains: adminBlockedDomainsReference,
  adminQueue: adminQueueReference,
  adminInbound: adminInboundReference
}
