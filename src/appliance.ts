/**
 * The layers of the appliance, composed once (layers memoize by reference: each long-lived layer
 * is a constant). `main.ts` picks what a command needs: `serve` runs everything, `migrate` and
 * the operator commands only the database.
 */
import { Effect, Layer } from "effect"
import { AppConfig, AppConfigLive } from "./config/app-config.ts"
import { isSupervisedWorker } from "./config/process-share.ts"
import { supervise } from "./supervisor/supervisor.ts"
import { DatabaseLive } from "./db/database.ts"
import { AuthFailures } from "./http/auth-failures.ts"
import { runMigrations } from "./db/migrator.ts"
import { HttpLive } from "./api/server.ts"
import { BodyBudgetService } from "./http/body-budget.ts"
import { LoggingLive } from "./logging.ts"
import { Accounts } from "./platform/accounts/Accounts.ts"
import { SessionLookupLive } from "./platform/accounts/session-lookup.ts"
import { ConsoleSessions } from "./platform/accounts/sessions.ts"
import { bootstrap } from "./platform/bootstrap.ts"
import { ApiKeys } from "./platform/keys/ApiKeys.ts"
import { KeyLookupLive } from "./platform/keys/key-lookup.ts"
import { KeyWebhook } from "./platform/keys/key-webhook.ts"
import { Domains } from "./platform/domains/Domains.ts"
import { RecheckJobLive } from "./platform/domains/RecheckJob.ts"
import { dnsConfigWarnings } from "./platform/domains/startup-warnings.ts"
import { AccountLimits } from "./platform/usage/AccountLimits.ts"
import { Analytics } from "./bulk/analytics/Analytics.ts"
import { Campaigns } from "./bulk/campaigns/Campaigns.ts"
import { CampaignControl } from "./bulk/campaigns/Control.ts"
import { CampaignsActorLive } from "./bulk/campaigns/FanOut.ts"
import { Contacts } from "./bulk/contacts/Contacts.ts"
import { BulkContentLive } from "./bulk/delivery-port.ts"
import { MessageComposingLive } from "./bulk/message-view-port.ts"
import { CsvReader } from "./bulk/contacts/csv-reader.ts"
import { ConfirmationMail } from "./bulk/lists/confirmation-mail.ts"
import { Lists } from "./bulk/lists/Lists.ts"
import { PublicTokens } from "./bulk/public/tokens.ts"
import { RenderEngine } from "./bulk/render/RenderEngine.ts"
import { Segments } from "./bulk/segments/Segments.ts"
import { Enroll } from "./bulk/sequences/Enroll.ts"
import { SequenceSchedulerLive } from "./bulk/sequences/SchedulerActor.ts"
import { Sequences } from "./bulk/sequences/Sequences.ts"
import { StepScheduler } from "./bulk/sequences/StepScheduler.ts"
import { Steps } from "./bulk/sequences/Steps.ts"
import { Templates } from "./bulk/templates/Templates.ts"
import { TestSend } from "./bulk/templates/TestSend.ts"
import { CampaignPreview } from "./bulk/campaigns/Preview.ts"
import { BulkSettings } from "./bulk/settings/Settings.ts"
import { TrackingPruneLive } from "./bulk/tracking/PruneJob.ts"
import { TrackingAggregatorLive } from "./bulk/tracking/aggregator.ts"
import { TrackingRecorder } from "./bulk/tracking/recorder.ts"
import { QuotaReserver } from "./platform/usage/QuotaReserver.ts"
import { Usage } from "./platform/usage/Usage.ts"
import { ResetJobLive } from "./platform/subscriptions/ResetJob.ts"
import { Subscriptions } from "./platform/subscriptions/Subscriptions.ts"
import { Tickets } from "./platform/tickets/Tickets.ts"
import { Reputation } from "./platform/reputation/Reputation.ts"
import { BulkHooksLive } from "./bulk/hooks.ts"
import { ReportedDeliveries } from "./inbound/processor/ports.ts"
import { AccountHooksLive, DeliveredCountsLive, reportedDeliveries } from "./mta/port-layers.ts"
import { ReputationSweepLive } from "./platform/reputation/SweepJob.ts"
import { Accept } from "./transactional/accept.ts"
import { SendContext } from "./transactional/send-context.ts"
import { SubmissionListenerLive } from "./transactional/submission/SubmissionListener.ts"
import { QueueWriter } from "./mta/queue/enqueue.ts"
import { AuditLog } from "./transactional/audit/AuditLog.ts"
import { MessageContent } from "./transactional/messages/MessageContent.ts"
import { MessageLookup } from "./transactional/messages/MessageLookup.ts"
import { Idempotency } from "./transactional/Idempotency.ts"
import { ScheduledSends } from "./transactional/scheduled/ScheduledSends.ts"
import { SchedulerLive } from "./transactional/scheduled/Scheduler.ts"
import { BlockedDomains } from "./platform/suppressions/BlockedDomains.ts"
import { Suppressions } from "./platform/suppressions/Suppressions.ts"
import { Dns } from "./lib/dns.ts"
import { Delivery } from "./mta/Delivery.ts"
import { Destinations } from "./mta/Destinations.ts"
import { MtaLive } from "./mta/Mta.ts"
import { MtaSts } from "./mta/mta-sts/MtaSts.ts"
import { TlsRptJobLive } from "./mta/tls-rpt/TlsRptJob.ts"
import { MtaConfigLive } from "./mta/MtaConfig.ts"
import { QueueOverview } from "./mta/overview/QueueOverview.ts"
import { DeliveryQueue } from "./mta/queue/DeliveryQueue.ts"
import { VerpSecret } from "./mta/VerpSecret.ts"
import { DmarcReports } from "./platform/dmarc/DmarcReports.ts"
import { QueueSignal, RemoteWakeupsLive } from "./db/QueueSignal.ts"
import { ExportDatabase } from "./db/export-database.ts"
import { DispatcherLive } from "./webhooks/Dispatcher.ts"
import { WebhookEndpoints } from "./webhooks/WebhookEndpoints.ts"
import { WebhookSender } from "./webhooks/WebhookSender.ts"
import { WebhookStore } from "./webhooks/WebhookStore.ts"
import { InboundStore } from "./inbound/listener/InboundStore.ts"
import { MxListenerLive } from "./inbound/listener/MxListener.ts"
import { InboundConfigLive } from "./inbound/InboundConfig.ts"
import { InboundQueue } from "./inbound/processor/InboundQueue.ts"
import { InboundProcessorLive } from "./inbound/processor/Processor.ts"
import { InboundHandoff } from "./inbound/processor/handoff.ts"
import { AuthFailuresLive } from "./http/auth-failures.ts"
import { MetricsScrape } from "./api/metrics/MetricsScrape.ts"
import { MetricsPortLive } from "./api/metrics/routes.ts"

/**
 * Configuration and logging: everything else runs inside these. Tracing is off: Herald exports no
 * traces, and with it on every SQL statement and HTTP request built a span (its attributes, the
 * statement text, the request's URL parsed again and its headers redacted) that nothing read — a
 * tenth of the main thread's time on the tracking endpoints (bench/campaign.ts profile).
 */
export const BaseLive = Layer.mergeAll(AppConfigLive, Layer.provide(LoggingLive, AppConfigLive), Layer.setTracerEnabled(false))

/**
 * The database with its schema up to date. A worker of the supervisor (HERALD_PROCESSES > 1) skips
 * the migrations: the supervisor ran them before it forked the workers.
 */
export const DatabaseReadyLive = Layer.effectDiscard(isSupervisedWorker() ? Effect.void : runMigrations).pipe(Layer.provideMerge(DatabaseLive))

/**
 * The ports lower areas declare, with the layers the higher ones provide (DESIGN "Layout"): bulk
 * reacts to suppressions, delivery outcomes and inbound reports; the MTA wakes held deliveries,
 * counts completed ones for reputation and tells inbound which delivery a report names (inbound is
 * its peer, so the tag is given here). Needs the database only; exported for tests that build
 * single services (the queue) without the rest.
 */
export const PortsLive = Layer.mergeAll(
  BulkHooksLive,
  AccountHooksLive,
  DeliveredCountsLive,
  Layer.effect(ReportedDeliveries, reportedDeliveries)
).pipe(Layer.provideMerge(Layer.merge(PublicTokens.Default, VerpSecret.Default)))

/** Services over the database, each built once. */
const CoreServicesLive = Layer.mergeAll(
  // One table of failed authentications for the HTTP API and SMTP submission.
  AuthFailures.Default,
  // One body budget for the HTTP API's bodies and SMTP submission's messages.
  BodyBudgetService.Default,
  ApiKeys.Default,
  Accounts.Default,
  ConsoleSessions.Default,
  Domains.Default,
  Suppressions.Default,
  BlockedDomains.Default,
  AuditLog.Default,
  MessageLookup.Default,
  AccountLimits.Default,
  Idempotency.Default,
  Subscriptions.Default,
  Tickets.Default,
  Reputation.Default,
  QueueSignal.Default,
  QueueWriter.Default,
  QuotaReserver.Default,
  DeliveryQueue.Default,
  DmarcReports.Default,
  TrackingRecorder.Default
).pipe(
  Layer.provideMerge(PortsLive),
  Layer.provideMerge(Layer.unwrapEffect(Effect.map(AppConfig, (config) => Dns.layer(config.dnsServers)))), Layer.provideMerge(ExportDatabase.Default))

/** Bulk features: contacts, lists, segments, templates and the rendering engine campaigns, sequences and confirmation mail share. */
const BulkServicesLive = Layer.mergeAll(
  TestSend.Default,
  // A campaign's test-send goes the template test-send's one path (TestSend `deliver`).
  CampaignPreview.Default.pipe(Layer.provide(TestSend.Default)),
  BulkSettings.Default,
  Contacts.Default,
  CsvReader.Default,
  Lists.Default,
  Segments.Default,
  CampaignControl.Default,
  Analytics.Default,
  Sequences.Default,
  Steps.Default,
  Enroll.Default,
  StepScheduler.Default,
  // The message content view composes through the bulk area's port (the render pool).
  MessageContent.Default.pipe(Layer.provide(MessageComposingLive))
).pipe(
  Layer.provideMerge(Layer.merge(Templates.Default, Campaigns.Default)),
  Layer.provideMerge(ConfirmationMail.Default),
  Layer.provideMerge(RenderEngine.Default)
)

/**
 * The keys API's port to the webhooks area, filled here rather than in src/webhooks/: the webhooks
 * area imports nothing of the keys (test/foundation/table-owners.test.ts), and WebhookEndpoints'
 * `configure` is already what the port asks for.
 */
const KeyWebhookLive = Layer.effect(
  KeyWebhook,
  Effect.map(WebhookEndpoints, (endpoints) => ({ configure: endpoints.configure }))
)

/**
 * The ports over services rather than the database alone (docs/architecture.md "Layering"): authentication
 * (src/http/) asks the keys who a token is and the accounts who a console session is; the keys API
 * asks the webhooks area to set a key's URL.
 */
const KeyPortsLive = Layer.mergeAll(KeyLookupLive, SessionLookupLive, KeyWebhookLive)

export const ServicesLive = Layer.merge(BulkServicesLive, KeyPortsLive).pipe(
  Layer.provideMerge(WebhookEndpoints.Default),
  Layer.provideMerge(Layer.mergeAll(ScheduledSends.Default, Usage.Default, WebhookSender.Default, SendContext.Default)),
  Layer.provideMerge(WebhookStore.Default),
  Layer.provideMerge(Accept.Default),
  Layer.provideMerge(CoreServicesLive),
  Layer.provideMerge(DatabaseReadyLive)
)

/**
 * The outbound MTA: its configuration, destination limits and the delivery step, which composes
 * campaign and sequence messages with the bulk area's part of them (the BulkContent port).
 */
const MtaServicesLive = Delivery.Default.pipe(
  Layer.provide(BulkContentLive),
  Layer.provideMerge(MtaSts.Default),
  Layer.provideMerge(Destinations.Default),
  Layer.provideMerge(MtaConfigLive)
)

/** The MTA actor; its status is also read by the admin queue view (one actor: layers are shared by reference). */
const MtaActorLive = MtaLive.pipe(Layer.provide(MtaServicesLive))

/**
 * What the HTTP API reads of the actors: the queue's snapshot (GET /v1/admin/queue) with the MTA's
 * status, and GET /metrics with the MTA's and the dispatcher's (the same actors as ActorsLive's:
 * layers are shared by reference) and the failed-authentication table the API's bearer shares.
 */
const MetricsScrapeLive = MetricsScrape.Default.pipe(Layer.provide(Layer.mergeAll(MtaActorLive, DispatcherLive, AuthFailuresLive)))
const ActorViewsLive = Layer.mergeAll(
  QueueOverview.Default.pipe(Layer.provide(Layer.merge(MtaActorLive, MtaConfigLive))),
  MetricsScrapeLive,
  AuthFailuresLive
)

/** The actors: long-running loops of every replica. */
const ActorsLive = Layer.mergeAll(
  SchedulerLive,
  SequenceSchedulerLive,
  CampaignsActorLive,
  ResetJobLive,
  RecheckJobLive,
  ReputationSweepLive,
  TrackingPruneLive,
  TrackingAggregatorLive,
  MtaActorLive,
  TlsRptJobLive.pipe(Layer.provide(MtaConfigLive)),
  DispatcherLive,
  RemoteWakeupsLive,
  SubmissionListenerLive,
  // One handoff for both: the listener hands its messages to this replica's processor in memory.
  Layer.merge(
    MxListenerLive.pipe(Layer.provide(InboundStore.Default)),
    InboundProcessorLive.pipe(Layer.provide(Layer.merge(InboundQueue.Default, InboundConfigLive)))
  ).pipe(Layer.provide(InboundHandoff.Default))
)

const BootstrapLive = Layer.effectDiscard(Effect.zipRight(dnsConfigWarnings, bootstrap))

/** A worker of the supervisor leaves the bootstrap (and its one printing of a new key) to the supervisor. */
const OwnBootstrapLive = isSupervisedWorker() ? Layer.empty : BootstrapLive

/**
 * `herald serve` with HERALD_PROCESSES > 1: the supervisor (src/supervisor/), which runs the
 * migrations and the bootstrap once (over the few services the bootstrap uses) and forks
 * `processes` workers, each running ApplianceLive.
 */
export const supervisorLive = (processes: number) =>
  supervise(
    processes,
    BootstrapLive.pipe(Layer.provide(Layer.mergeAll(Accounts.Default, ApiKeys.Default)), Layer.provide(PortsLive), Layer.provide(DatabaseReadyLive))
  )

/** `herald serve`: migrations, bootstrap, then the HTTP API (later: MTA, MX listener, webhooks). */
export const ApplianceLive = Layer.mergeAll(HttpLive.pipe(Layer.provide(ActorViewsLive)), MetricsPortLive.pipe(Layer.provide(MetricsScrapeLive)), ActorsLive).pipe(
  Layer.provide(OwnBootstrapLive),
  Layer.provide(ServicesLive)
)
