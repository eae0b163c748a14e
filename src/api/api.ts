/**
 * The whole HTTP contract, composed from one HttpApi per area of the spec. Each area is its own
 * document (/openapi/openapi.<area>.json, /reference/<area>/); the served API is their union.
 * Later issues add groups to an area here and nothing else changes.
 *
 * Errors every endpoint can answer are declared once at this level: a malformed body or parameter
 * (400), an unknown route (404), an oversized body (413), and an internal failure (500).
 */
import { HttpApi } from "@effect/platform"
import { AnalyticsGroup } from "../bulk/analytics/Api.ts"
import { CampaignsGroup } from "../bulk/campaigns/Api.ts"
import { ContactsGroup } from "../bulk/contacts/Api.ts"
import { ListsGroup } from "../bulk/lists/Api.ts"
import { SegmentsGroup } from "../bulk/segments/Api.ts"
import { SequencesGroup } from "../bulk/sequences/Api.ts"
import { SettingsGroup } from "../bulk/settings/Api.ts"
import { TemplatesGroup } from "../bulk/templates/Api.ts"
import { AuditGroup } from "../transactional/audit/Api.ts"
import { MessagesGroup } from "../transactional/messages/Api.ts"
import { StatsGroup } from "../transactional/stats/Api.ts"
import { WebhooksGroup } from "../webhooks/Api.ts"
import { ScheduledGroup } from "../transactional/scheduled/Api.ts"
import { SendGroup } from "../transactional/send/Api.ts"
import { AdminGroup } from "../platform/admin/Api.ts"
import { DmarcGroup } from "../platform/dmarc/Api.ts"
import { DomainsGroup } from "../platform/domains/Api.ts"
import { KeysGroup } from "../platform/keys/Api.ts"
import { PlansGroup } from "../platform/plans/Api.ts"
import { SubscriptionsGroup } from "../platform/subscriptions/Api.ts"
import { SuppressionsGroup } from "../platform/suppressions/Api.ts"
import { AdminBlockedDomainsGroup, AdminSuppressionsGroup } from "../platform/suppressions/AdminApi.ts"
import { AdminTicketsGroup, TicketsGroup } from "../platform/tickets/Api.ts"
import { UsageGroup } from "../platform/usage/Api.ts"
import { BadRequest, Internal, NotFound, PayloadTooLarge, Unavailable } from "../http/errors.ts"
import { HERALD_API_ID } from "../http/group-api.ts"
import { ConsoleGroup } from "./console/Api.ts"
import { MetaGroup } from "./meta/Api.ts"
import { AdminQueueGroup } from "../mta/overview/Api.ts"
import { AdminInboundGroup } from "../inbound/admin/Api.ts"

export class MetaArea extends HttpApi.make("meta").add(MetaGroup) {}

export class TransactionalArea extends HttpApi.make("transactional").add(SendGroup).add(ScheduledGroup).add(AuditGroup).add(MessagesGroup) {}

/** Campaigns, sequences and tracking arrive in a later wave. */
export class BulkArea extends HttpApi.make("bulk")
  .add(TemplatesGroup)
  .add(ContactsGroup)
  .add(ListsGroup)
  .add(SegmentsGroup)
  .add(CampaignsGroup)
  .add(AnalyticsGroup)
  .add(SequencesGroup)
  .add(SettingsGroup)
  // 503 `render_busy`: every render worker taken and the account's line full (src/bulk/render/RenderEngine.ts).
  .addError(Unavailable)
{}

/** What a client of the platform area uses (the public /docs.json holds these, not admin). */
export class PlatformArea extends HttpApi.make("platform")
  .add(KeysGroup)
  .add(DomainsGroup)
  .add(SuppressionsGroup)
  .add(UsageGroup)
  .add(StatsGroup)
  .add(PlansGroup)
  .add(SubscriptionsGroup)
  .add(TicketsGroup)
  .add(WebhooksGroup)
  .add(DmarcGroup)
{}

/** Operator endpoints under /v1/admin: documented with the platform area, left out of /docs.json. */
export class AdminArea extends HttpApi.make("admin")
  .add(AdminGroup)
  .add(AdminTicketsGroup)
  .add(AdminSuppressionsGroup)
  .add(AdminBlockedDomainsGroup)
  .add(AdminQueueGroup)
  .add(AdminInboundGroup)
{}

/** The console's session routes (issue 28): served, in no public document (src/api/console/Api.ts). */
export class ConsoleArea extends HttpApi.make("console").add(ConsoleGroup) {}

export class HeraldApi extends HttpApi.make(HERALD_API_ID)
  .addHttpApi(MetaArea)
  .addHttpApi(TransactionalArea)
  .addHttpApi(BulkArea)
  .addHttpApi(PlatformArea)
  .addHttpApi(AdminArea)
  .addHttpApi(ConsoleArea)
  .addError(BadRequest)
  .addError(NotFound)
  .addError(PayloadTooLarge)
  .addError(Internal)
{}
