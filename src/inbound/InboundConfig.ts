/**
 * Configuration of the inbound processor (every variable in docs/configuration.md and config/example.env).
 * The defaults are an operator's usual ones: raw mail kept 30 days for re-parsing and disputes;
 * three soft bounces of one address within 7 days count as a hard one (the mailbox has been
 * full or unreachable for days, so further mail only hurts the sender's reputation); a DMARC alert
 * when more than 10 % of at least 100 reported messages failed over 7 days. The parsers run in
 * worker threads, one per core but the one the listener and the database work need (0: in the
 * appliance's own thread). A DMARC report of more than 20 000 records is refused unparsed: its
 * tree, not its bytes, is what a parse's memory grows with. At most 200 feedback reports an hour
 * from one IP are acted on through a Message-ID (an authenticated feedback loop's; trust.ts) — a
 * busy loop sends fewer to one sender, and a replay of a real report cannot pause an account in an
 * hour. The domain grace (HERALD_DOMAIN_GRACE_HOURS, read by AppConfig) decides who still owns a
 * domain's DMARC reports.
 */
import * as os from "node:os"
import { Config, Context, Effect, Layer } from "effect"
import { AppConfig, checked } from "../config/app-config.ts"
import { processShare } from "../config/process-share.ts"
import { defaultDmarcLimits } from "./parse/dmarc/index.ts"

export interface InboundSettings {
  readonly enabled: boolean
  readonly retentionDays: number
  readonly softBounceLimit: number
  readonly softBounceWindowDays: number
  readonly dmarcWindowDays: number
  readonly dmarcFailThreshold: number
  readonly dmarcMinVolume: number
  /** Worker threads that parse inbound messages; 0 parses in the main thread. */
  readonly parseWorkers: number
  /** `<record>` elements one DMARC report may hold; a larger one is refused unparsed and parked. */
  readonly dmarcMaxRecords: number
  /** Reports from one IP acted on through a Message-ID (authenticated feedback loops) per hour. */
  readonly feedbackReportsPerIpHour: number
  /** How long a domain whose verification record vanished stays its account's (AppConfig). */
  readonly domainGraceHours: number
}

export class InboundConfig extends Context.Tag("herald/InboundConfig")<InboundConfig, InboundSettings>() {}

const positive = (name: string, fallback: number) =>
  checked(name, Config.number(), "must be more than 0", (n) => n > 0, fallback)

/** One worker per core but one, and at least one. */
export const defaultParseWorkers = () => Math.max(1, (os.availableParallelism?.() ?? os.cpus().length) - 1)

export const inboundSettings: Config.Config<Omit<InboundSettings, "domainGraceHours">> = Config.all({
  enabled: Config.boolean("HERALD_INBOUND_ENABLED").pipe(Config.withDefault(true)),
  retentionDays: positive("HERALD_INBOUND_RETENTION_DAYS", 30),
  softBounceLimit: checked("HERALD_SOFT_BOUNCE_LIMIT", Config.integer(), "must be at least 1", (n) => n >= 1, 3),
  softBounceWindowDays: positive("HERALD_SOFT_BOUNCE_WINDOW_DAYS", 7),
  dmarcWindowDays: checked("HERALD_DMARC_WINDOW_DAYS", Config.integer(), "must be at least 1", (n) => n >= 1, 7),
  dmarcFailThreshold: checked("HERALD_DMARC_FAIL_THRESHOLD", Config.number(), "must be a fraction from 0 to 1", (n) => n >= 0 && n <= 1, 0.1),
  dmarcMinVolume: checked("HERALD_DMARC_MIN_VOLUME", Config.integer(), "must be at least 1", (n) => n >= 1, 100),
  parseWorkers: checked("HERALD_PARSE_WORKERS", Config.integer(), "must be from 0 to 64", (n) => n >= 0 && n <= 64, defaultParseWorkers()),
  dmarcMaxRecords: checked("HERALD_DMARC_MAX_RECORDS", Config.integer(), "must be from 1 to 1000000", (n) => n >= 1 && n <= 1_000_000, defaultDmarcLimits.maxRecords),
  feedbackReportsPerIpHour: checked("HERALD_FEEDBACK_REPORTS_PER_IP_HOUR", Config.integer(), "must be 0 or more", (n) => n >= 0, 200)
})

export const InboundConfigLive = Layer.effect(
  InboundConfig,
  Effect.zipWith(inboundSettings, AppConfig, (settings, app): InboundSettings => ({
    ...settings,
    // Per appliance: each of HERALD_PROCESSES workers takes its share (0 stays 0: parse in the main thread).
    parseWorkers: settings.parseWorkers === 0 ? 0 : processShare.count(settings.parseWorkers),
    domainGraceHours: app.domainGraceHours
  }))
)
