/**
 * Typed configuration from the environment (Effect `Config`). Every variable here is documented in
 * docs/configuration.md and in `config/example.env`; a bad value stops start-up with a ConfigError that names
 * the variable (for example "Expected HERALD_HTTP_PORT to be an integer").
 */
import * as net from "node:net"
import * as os from "node:os"
import { Config, Context, Layer, LogLevel, Option, Redacted } from "effect"
import { isDomainName } from "../lib/email.ts"
import { isAcceptablePassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "../lib/password-rules.ts"
import { processShare, type ProcessShare } from "./process-share.ts"

export type LogFormat = "json" | "pretty" | "logfmt"
export type HeraldEnv = "development" | "production"

export interface AppConfigShape {
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly dbPoolMax: number
  readonly dataDir: string
  readonly httpHost: string
  readonly httpPort: number
  /** HERALD_CONSOLE_DIR: where the built web console is (default dist/console/, src/api/console/static.ts). */
  readonly consoleDir: Option.Option<string>
  readonly smtpPort: number
  readonly smtpHost: string
  readonly smtpMaxMessageBytes: number
  readonly smtpMaxClients: number
  readonly smtpMaxPerIp: number
  /** Bytes of inbound messages the MX listener holds in memory at once, across connections. */
  readonly smtpInboundBudgetBytes: number
  readonly smtpMaxMessagesPerMinutePerIp: number
  readonly smtpTlsCert: Option.Option<string>
  readonly smtpTlsKey: Option.Option<string>
  /** SMTP submission (src/transactional/submission/): STARTTLS port, and the implicit-TLS port (with a certificate only). */
  readonly submissionPort: number
  readonly submissionTlsPort: number
  /** HERALD_SUBMISSION_IDLE_TIMEOUT_SECONDS / _COMMAND_ / _DATA_ in ms: a silent client, a command line trickled, one message's DATA. */
  readonly submissionIdleTimeoutMs: number
  readonly submissionCommandTimeoutMs: number
  readonly submissionDataTimeoutMs: number
  readonly baseUrl: string
  readonly trackUrl: string
  readonly hostname: string
  readonly bounceDomain: string
  /** HERALD_PROFILE=dev: the local trial profile (src/config/dev-profile.ts); never with production. */
  readonly devProfile: boolean
  /** HERALD_PUBLIC_IPS: addresses (or CIDR ranges) mail leaves from, for the return-path SPF record. */
  readonly publicIps: ReadonlyArray<string>
  /** HERALD_SMARTHOST is set (MtaConfig parses it): mail leaves from the relay. */
  readonly smarthostConfigured: boolean
  /** HERALD_SMARTHOST_SPF_INCLUDE: the relay's SPF domain, included by the return-path SPF record. */
  readonly smarthostSpfInclude: Option.Option<string>
  readonly inboundDomains: ReadonlyArray<string>
  readonly bootstrapKey: Option.Option<Redacted.Redacted<string>>
  /** HERALD_BOOTSTRAP_PASSWORD: the bootstrap admin's console password, set at each start (src/platform/bootstrap.ts). */
  readonly bootstrapPassword: Option.Option<Redacted.Redacted<string>>
  /** HERALD_CONSOLE_SESSION_IDLE_HOURS in milliseconds: a console session unused this long has ended. */
  readonly consoleSessionIdleMs: number
  /** HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS: failed console sign-ins per client address in 15 minutes before 429. */
  readonly consoleSigninFailuresPerAddress: number
  /** Active (not revoked) keys one account may have: key creation past it answers 409. */
  readonly maxKeysPerAccount: number
  /** Failed authentications per client address in a minute before that address gets 429 (src/http/auth.ts). */
  readonly authFailuresPerMin: number
  readonly env: HeraldEnv
  readonly logFormat: LogFormat
  readonly logLevel: LogLevel.LogLevel
  readonly dnsServers: ReadonlyArray<string>
  readonly domainGraceHours: number
  readonly maxRecipients: number
  readonly maxJsonBytes: number
  /** HERALD_HTTP_BODY_BUDGET_MB in bytes: large request bodies being handled at once (server-middleware.ts). */
  readonly httpBodyBudgetBytes: number
  /** HERALD_HTTP_MAX_BODY_KB in bytes: the largest body of any route but the send (which has MAX_JSON_MB). */
  readonly httpMaxBodyBytes: number
  /** HERALD_HTTP_BODY_ACCOUNT_SHARE_PERCENT: the part of the body budget one account, across its keys, may hold (body-budget.ts). */
  readonly httpBodyAccountSharePercent: number
  /** HERALD_HTTP_BODY_KEY_SHARE_PERCENT: the part of its account's share one key may hold (body-budget.ts). */
  readonly httpBodyKeySharePercent: number
  /** HERALD_HTTP_MIN_UPLOAD_KBPS in bytes per second: slower uploads are dropped after the grace period. */
  readonly httpMinUploadBytesPerSecond: number
  /** HERALD_HTTP_UPLOAD_GRACE_S in milliseconds: how long an upload may go slower than the minimum rate. */
  readonly httpUploadGraceMs: number
  /** HERALD_MAX_REQUEST_RECIPIENTS: to + cc + bcc over all personalizations of one send request. */
  readonly maxRequestRecipients: number
  /** HERALD_TEMPLATE_VERSIONS_MAX: versions kept per bulk template; older ones are pruned when a new one is stored. */
  readonly templateVersionsMax: number
  /** HERALD_IMPORT_VALIDATION_MIN: unique addresses from which a contact import's invalid-percentage gate applies. */
  readonly importValidationMin: number
  /** HERALD_IMPORT_MAX_INVALID_PCT: most invalid addresses (percent) a gated import may hold; more → 422, nothing inserted. */
  readonly importMaxInvalidPct: number
  /** HERALD_IMPORT_WORKERS: worker threads that read contact imports' CSV and JSON bodies (started at the first import). */
  readonly importWorkers: number
  /** HERALD_IMPORT_PARSE_TIMEOUT_S in milliseconds: the longest one CSV body may take to read; past it its worker is terminated. */
  readonly importParseTimeoutMs: number
  /** HERALD_ENROLL_CAP: most new subscriptions one `POST /v1/bulk/sequences/{id}/enroll` creates; enrolling again continues. */
  readonly enrollCap: number
  /** HERALD_CAMPAIGN_FANOUT_BATCH: campaign recipients queued per fan-out transaction. */
  readonly campaignFanoutBatch: number
  /** HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT: a sending campaign whose hard bounces reach this percent of its final deliveries pauses (`bounce_rate`). */
  readonly campaignBouncePausePct: number
  /** HERALD_CAMPAIGN_COMPLAINT_PAUSE_PCT: … whose complaints reach this percent of its final deliveries pauses (`complaint_rate`). */
  readonly campaignComplaintPausePct: number
  /** HERALD_CAMPAIGN_PAUSE_MIN: final deliveries before either rate is judged (and again after each resume). */
  readonly campaignPauseMin: number
  /**
   * HERALD_CAMPAIGN_REPUTATION_CHECK_SECONDS in milliseconds: how often the sending campaigns' rates
   * are judged. Their counts read their deliveries, so not on every 1 s tick of the campaigns actor
   * by default: a few more outcomes in 5 s change a rate over hundreds by little.
   */
  readonly campaignReputationCheckMs: number
  /** HERALD_TRACKING_REPEAT_SECONDS in milliseconds: a token's fetches this close to its last counted one are no new open or click. */
  readonly trackingRepeatMs: number
  /** HERALD_AB_WAIT_UNIT_SECONDS in milliseconds: how long a "minute" of an A/B test's wait is (tests and staging; 60 s in production). */
  readonly abWaitUnitMs: number
  /** HERALD_RENDER_WORKERS: worker threads that render templates and compile MJML (one account uses at most half of them at a time). */
  readonly renderWorkers: number
  /** HERALD_RENDER_TIMEOUT_MS: the longest one render or MJML compile may run before its worker is stopped. */
  readonly renderTimeoutMs: number
  readonly maxAttachmentBytes: number
  readonly maxTotalAttachmentsBytes: number
  /** HERALD_QUERY_TIMEOUT_MS: statement timeout of the reads a request runs (src/db/statement-timeout.ts). */
  readonly queryTimeoutMs: number
  /** HERALD_LONG_QUERY_TIMEOUT_MS: statement timeout of the bulk work that runs long (freeze, import, fan-out). */
  readonly longQueryTimeoutMs: number
  /**
   * HERALD_ADMIN_QUEUE_SNAPSHOT_SECONDS in milliseconds: how long GET /v1/admin/queue answers from one
   * snapshot (src/mta/overview/QueueOverview.ts). At most 15 s: the issue's bound on the answer's age.
   */
  readonly adminQueueSnapshotMs: number
  /** HERALD_EXPORT_POOL_MAX: connections of the CSV exports' own pool (src/db/export-database.ts). */
  readonly exportPoolMax: number
  /** HERALD_EXPORT_WRITE_TIMEOUT_S in milliseconds: an export whose client takes nothing for this long is ended. */
  readonly exportWriteTimeoutMs: number
  /** HERALD_METRICS_TOKEN: the bearer token GET /metrics requires, on either port (src/api/metrics/). */
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  /** HERALD_METRICS_PORT: a separate listener that serves only /metrics; unset: none. */
  readonly metricsPort: Option.Option<number>
  /** HERALD_METRICS_HOST: the address the metrics port binds to (default 127.0.0.1). */
  readonly metricsHost: string
}

export class AppConfig extends Context.Tag("herald/AppConfig")<AppConfig, AppConfigShape>() {}

/**
 * A checked variable. The check runs on the unnamed value and the name is added after, so a
 * failure reads "Invalid data at MAX_JSON_MB: must be …" (checking a named config loses the name).
 */
export const checked = <A>(name: string, config: Config.Config<A>, message: string, validation: (a: A) => boolean, fallback: A) =>
  config.pipe(Config.validate({ message, validation }), Config.nested(name), Config.withDefault(fallback))

/** MB is 2^20 bytes everywhere (DESIGN.md "Size limits"). */
const megabytes = (name: string, fallback: number) =>
  checked(name, Config.number(), "must be a positive number of megabytes", (n) => n > 0, fallback).pipe(
    Config.map((mb) => Math.floor(mb * 1024 * 1024))
  )

const port = (name: string, fallback: number) =>
  checked(name, Config.integer(), "must be a port number from 0 to 65535", (n) => n >= 0 && n <= 65535, fallback)

/** Render workers by default: CPUs − 1, and at least 2 so one account's half leaves the other half to the rest. */
const defaultRenderWorkers = () => Math.max(2, (os.availableParallelism?.() ?? os.cpus().length) - 1)

/**
 * A duration in seconds (fractions allowed: tests use short ones), in milliseconds: more than 0,
 * or zero or more with `zero`, and at most `max` when given.
 */
const seconds = (name: string, fallback: number, bounds: { readonly zero?: boolean; readonly max?: number } = {}) => {
  const { zero = false, max } = bounds
  const message = `must be ${zero ? "zero or more" : "more than 0"}${max === undefined ? "" : ` and at most ${max}`} seconds`
  const valid = (n: number) => (zero ? n >= 0 : n > 0) && (max === undefined || n <= max)
  return checked(name, Config.number(), message, valid, fallback).pipe(Config.map((s) => Math.round(s * 1000)))
}

const atLeast = (name: string, min: number, fallback: number) =>
  checked(name, Config.integer(), `must be a whole number of at least ${min}`, (n) => n >= min, fallback)

/**
 * HERALD_AB_WAIT_UNIT_SECONDS: a test's "minute" of an A/B wait (issue 30 item 12), so a test or a
 * staging run need not wait 30 real minutes. With HERALD_ENV=production any value but 60 stops
 * the start with one line (src/cli/production-test-settings.ts): there the wait a marketer chose
 * is the wait they get.
 */
const abWaitUnit = checked("HERALD_AB_WAIT_UNIT_SECONDS", Config.number(), "must be more than 0 seconds", (n) => n > 0, 60)
  .pipe(Config.map((seconds) => Math.round(seconds * 1000)))

/** An optional secret where an empty value (as compose files often leave it) means unset. */
const optionalSecret = (name: string) =>
  Config.option(Config.redacted(name)).pipe(Config.map(Option.filter((v) => Redacted.value(v).trim() !== "")))

const commaList = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => raw.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0))
  )

/** An IPv4 or IPv6 address, or a CIDR range of one (what an SPF ip4:/ip6: mechanism takes). */
const isIpOrRange = (value: string) => {
  const [address = "", prefix, ...rest] = value.split("/")
  const family = net.isIP(address)
  if (family === 0 || rest.length > 0) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

const url = (name: string) =>
  Config.string().pipe(
    Config.validate({
      message: "must be an absolute http(s) URL",
      validation: (raw) => {
        try {
          return ["http:", "https:"].includes(new URL(raw).protocol)
        } catch {
          return false
        }
      }
    }),
    Config.map((raw) => raw.replace(/\/+$/, "")),
    Config.nested(name),
    Config.option
  )

/**
 * The per-appliance limits of this file as one process's share of them (process-share.ts): with
 * HERALD_PROCESSES=N each worker takes 1/N, so N processes together keep these limits.
 */
export const perProcessLimits = (
  raw: Pick<
    AppConfigShape,
    | "dbPoolMax" | "exportPoolMax" | "httpBodyBudgetBytes" | "smtpInboundBudgetBytes" | "smtpMaxClients" | "smtpMaxPerIp"
    | "renderWorkers" | "importWorkers"
  >,
  share: ProcessShare
) => ({
  dbPoolMax: share.pool(raw.dbPoolMax),
  exportPoolMax: share.count(raw.exportPoolMax),
  httpBodyBudgetBytes: share.count(raw.httpBodyBudgetBytes),
  smtpInboundBudgetBytes: share.count(raw.smtpInboundBudgetBytes),
  smtpMaxClients: share.count(raw.smtpMaxClients),
  smtpMaxPerIp: share.count(raw.smtpMaxPerIp),
  renderWorkers: share.count(raw.renderWorkers),
  importWorkers: share.count(raw.importWorkers)
})

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  databaseUrl: optionalSecret("DATABASE_URL"),
  dbPoolMax: atLeast("HERALD_DB_POOL_MAX", 2, 10),
  dataDir: Config.string("HERALD_DATA_DIR").pipe(Config.withDefault("./data")),
  httpHost: Config.string("HERALD_HTTP_HOST").pipe(Config.withDefault("0.0.0.0")),
  httpPort: port("HERALD_HTTP_PORT", 8080),
  consoleDir: Config.option(Config.string("HERALD_CONSOLE_DIR")),
  smtpPort: port("HERALD_SMTP_PORT", 2525),
  smtpHost: Config.string("HERALD_SMTP_HOST").pipe(Config.withDefault("0.0.0.0")),
  smtpMaxMessageBytes: megabytes("HERALD_SMTP_MAX_MESSAGE_MB", 25),
  smtpMaxClients: atLeast("HERALD_SMTP_MAX_CLIENTS", 1, 200),
  smtpMaxPerIp: atLeast("HERALD_SMTP_MAX_CONNECTIONS_PER_IP", 1, 20),
  smtpInboundBudgetBytes: megabytes("HERALD_SMTP_INBOUND_BUDGET_MB", 64),
  smtpMaxMessagesPerMinutePerIp: atLeast("HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP", 1, 600),
  smtpTlsCert: Config.option(Config.string("HERALD_SMTP_TLS_CERT")),
  smtpTlsKey: Config.option(Config.string("HERALD_SMTP_TLS_KEY")),
  submissionPort: port("HERALD_SUBMISSION_PORT", 2587),
  submissionTlsPort: port("HERALD_SUBMISSION_TLS_PORT", 2465),
  submissionIdleTimeoutMs: seconds("HERALD_SUBMISSION_IDLE_TIMEOUT_SECONDS", 60),
  submissionCommandTimeoutMs: seconds("HERALD_SUBMISSION_COMMAND_TIMEOUT_SECONDS", 30),
  submissionDataTimeoutMs: seconds("HERALD_SUBMISSION_DATA_TIMEOUT_SECONDS", 300),
  baseUrl: url("HERALD_BASE_URL"),
  trackUrl: url("HERALD_TRACK_URL"),
  hostname: Config.string("HERALD_HOSTNAME").pipe(Config.withDefault(os.hostname())),
  bounceDomain: Config.option(Config.string("HERALD_BOUNCE_DOMAIN")),
  publicIps: Config.string().pipe(
    Config.map((raw) => raw.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0)),
    Config.validate({ message: "must be IP addresses or CIDR ranges, comma-separated", validation: (ips) => ips.every(isIpOrRange) }),
    Config.nested("HERALD_PUBLIC_IPS"),
    Config.withDefault([] as ReadonlyArray<string>)
  ),
  smarthostConfigured: Config.option(Config.string("HERALD_SMARTHOST")).pipe(
    Config.map(Option.exists((raw) => raw.trim() !== ""))
  ),
  smarthostSpfInclude: Config.string().pipe(
    Config.map((raw) => raw.trim().toLowerCase()),
    Config.validate({ message: "must be a domain name such as spf.relay.example", validation: (d) => d === "" || isDomainName(d) }),
    Config.nested("HERALD_SMARTHOST_SPF_INCLUDE"),
    Config.option,
    Config.map(Option.filter((d) => d !== ""))
  ),
  inboundDomains: commaList("HERALD_INBOUND_DOMAINS"),
  bootstrapKey: Config.redacted().pipe(
    Config.validate({
      message: "must be at least 32 characters without spaces",
      validation: (token) => Redacted.value(token) === "" || /^\S{32,}$/.test(Redacted.value(token))
    }),
    Config.nested("HERALD_BOOTSTRAP_KEY"),
    Config.option,
    Config.map(Option.filter((token) => Redacted.value(token) !== ""))
  ),
  bootstrapPassword: Config.redacted().pipe(
    Config.validate({
      message: `must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`,
      validation: (password) => Redacted.value(password) === "" || isAcceptablePassword(Redacted.value(password))
    }),
    Config.nested("HERALD_BOOTSTRAP_PASSWORD"),
    Config.option,
    Config.map(Option.filter((password) => Redacted.value(password) !== ""))
  ),
  consoleSessionIdleMs: checked("HERALD_CONSOLE_SESSION_IDLE_HOURS", Config.number(), "must be more than 0 hours", (n) => n > 0, 12)
    .pipe(Config.map((hours) => Math.round(hours * 3_600_000))),
  consoleSigninFailuresPerAddress: atLeast("HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS", 1, 30),
  maxKeysPerAccount: atLeast("HERALD_MAX_KEYS_PER_ACCOUNT", 1, 100),
  authFailuresPerMin: atLeast("HERALD_AUTH_FAILURES_PER_MIN", 1, 20),
  devProfile: Config.literal("dev")("HERALD_PROFILE").pipe(Config.option, Config.map(Option.isSome)),
  env: Config.literal("development", "production")("HERALD_ENV").pipe(Config.withDefault("development" as const)),
  logFormat: Config.literal("json", "pretty", "logfmt")("HERALD_LOG_FORMAT").pipe(
    Config.withDefault((process.stdout.isTTY ? "pretty" : "logfmt") as LogFormat)
  ),
  logLevel: Config.logLevel("HERALD_LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  dnsServers: commaList("HERALD_DNS_SERVERS"),
  domainGraceHours: checked("HERALD_DOMAIN_GRACE_HOURS", Config.number(), "must be zero or more hours", (n) => n >= 0, 72),
  maxRecipients: atLeast("HERALD_MAX_RECIPIENTS", 1, 1000),
  maxJsonBytes: megabytes("MAX_JSON_MB", 15),
  httpBodyBudgetBytes: megabytes("HERALD_HTTP_BODY_BUDGET_MB", 32),
  httpMaxBodyBytes: atLeast("HERALD_HTTP_MAX_BODY_KB", 1, 1024).pipe(Config.map((kb) => kb * 1024)),
  httpBodyAccountSharePercent: checked(
    "HERALD_HTTP_BODY_ACCOUNT_SHARE_PERCENT",
    Config.number(),
    "must be a percentage above 0 and at most 100",
    (n) => n > 0 && n <= 100,
    50
  ),
  httpBodyKeySharePercent: checked(
    "HERALD_HTTP_BODY_KEY_SHARE_PERCENT",
    Config.number(),
    "must be a percentage above 0 and at most 100",
    (n) => n > 0 && n <= 100,
    50
  ),
  httpMinUploadBytesPerSecond: checked("HERALD_HTTP_MIN_UPLOAD_KBPS", Config.number(), "must be zero or more KB per second", (n) => n >= 0, 64)
    .pipe(Config.map((kb) => Math.floor(kb * 1024))),
  httpUploadGraceMs: seconds("HERALD_HTTP_UPLOAD_GRACE_S", 10, { zero: true }),
  maxRequestRecipients: atLeast("HERALD_MAX_REQUEST_RECIPIENTS", 1, 10_000),
  templateVersionsMax: atLeast("HERALD_TEMPLATE_VERSIONS_MAX", 1, 20),
  importValidationMin: atLeast("HERALD_IMPORT_VALIDATION_MIN", 1, 100),
  importMaxInvalidPct: checked("HERALD_IMPORT_MAX_INVALID_PCT", Config.number(), "must be a percentage from 0 to 100", (n) => n >= 0 && n <= 100, 10),
  importWorkers: checked("HERALD_IMPORT_WORKERS", Config.integer(), "must be from 1 to 64", (n) => n >= 1 && n <= 64, 2),
  importParseTimeoutMs: seconds("HERALD_IMPORT_PARSE_TIMEOUT_S", 60),
  enrollCap: atLeast("HERALD_ENROLL_CAP", 1, 10_000),
  campaignFanoutBatch: atLeast("HERALD_CAMPAIGN_FANOUT_BATCH", 1, 10_000),
  campaignBouncePausePct: checked("HERALD_CAMPAIGN_BOUNCE_PAUSE_PCT", Config.number(), "must be a percentage from 0 (exclusive) to 100", (n) => n > 0 && n <= 100, 5),
  campaignComplaintPausePct: checked("HERALD_CAMPAIGN_COMPLAINT_PAUSE_PCT", Config.number(), "must be a percentage from 0 (exclusive) to 100", (n) => n > 0 && n <= 100, 0.1),
  campaignPauseMin: atLeast("HERALD_CAMPAIGN_PAUSE_MIN", 1, 500),
  campaignReputationCheckMs: seconds("HERALD_CAMPAIGN_REPUTATION_CHECK_SECONDS", 5),
  trackingRepeatMs: seconds("HERALD_TRACKING_REPEAT_SECONDS", 60, { zero: true }),
  abWaitUnitMs: abWaitUnit,
  renderWorkers: checked("HERALD_RENDER_WORKERS", Config.integer(), "must be from 1 to 64", (n) => n >= 1 && n <= 64, defaultRenderWorkers()),
  renderTimeoutMs: checked("HERALD_RENDER_TIMEOUT_MS", Config.integer(), "must be from 100 to 600000 milliseconds", (n) => n >= 100 && n <= 600_000, 30_000),
  maxAttachmentBytes: megabytes("MAX_ATTACHMENT_MB", 10),
  maxTotalAttachmentsBytes: megabytes("MAX_TOTAL_ATTACHMENTS_MB", 20),
  queryTimeoutMs: atLeast("HERALD_QUERY_TIMEOUT_MS", 100, 5_000),
  longQueryTimeoutMs: atLeast("HERALD_LONG_QUERY_TIMEOUT_MS", 1_000, 300_000),
  adminQueueSnapshotMs: seconds("HERALD_ADMIN_QUEUE_SNAPSHOT_SECONDS", 15, { max: 15 }),
  exportPoolMax: atLeast("HERALD_EXPORT_POOL_MAX", 1, 3),
  exportWriteTimeoutMs: atLeast("HERALD_EXPORT_WRITE_TIMEOUT_S", 1, 30).pipe(Config.map((s) => s * 1000)),
  metricsToken: Config.redacted().pipe(
    Config.validate({
      message: "must be at least 16 characters without spaces",
      validation: (token) => Redacted.value(token) === "" || /^\S{16,}$/.test(Redacted.value(token))
    }),
    Config.nested("HERALD_METRICS_TOKEN"),
    Config.option,
    Config.map(Option.filter((token) => Redacted.value(token) !== ""))
  ),
  metricsPort: Config.integer().pipe(
    Config.validate({ message: "must be a port number from 1 to 65535", validation: (n) => n >= 1 && n <= 65535 }),
    Config.nested("HERALD_METRICS_PORT"),
    Config.option
  ),
  metricsHost: Config.string("HERALD_METRICS_HOST").pipe(Config.withDefault("127.0.0.1"))
}).pipe(
  Config.map((raw) => {
    const baseUrl = Option.getOrElse(raw.baseUrl, () => `http://localhost:${raw.httpPort}`)
    return {
      ...raw,
      ...perProcessLimits(raw, processShare),
      baseUrl,
      trackUrl: Option.getOrElse(raw.trackUrl, () => baseUrl),
      bounceDomain: Option.getOrElse(raw.bounceDomain, () => `bounces.${raw.hostname}`).toLowerCase()
    }
  })
)

export const AppConfigLive = Layer.effect(AppConfig, appConfig)

