/**
 * Configuration of the inbound processor (every variable in the README and config/example.env).
 * The defaults are an operator's usual ones: raw mail kept 30 days for re-parsing and disputes;
 * three soft bounces of one address within 7 days count as a hard one (the mailbox has been
 * full or unreachable for days, so further mail only hurts the sender's reputation); a DMARC alert
 * when more than 10 % of at least 100 reported messages failed over 7 days.
 */
import { Config, Context, Layer } from "effect"
import { checked } from "../config/app-config.ts"

export interface InboundSettings {
  readonly enabled: boolean
  readonly retentionDays: number
  readonly softBounceLimit: number
  readonly softBounceWindowDays: number
  readonly dmarcWindowDays: number
  readonly dmarcFailThreshold: number
  readonly dmarcMinVolume: number
}

export class InboundConfig extends Context.Tag("herald/InboundConfig")<InboundConfig, InboundSettings>() {}

const positive = (name: string, fallback: number) =>
  checked(name, Config.number(), "must be more than 0", (n) => n > 0, fallback)

export const inboundSettings: Config.Config<InboundSettings> = Config.all({
  enabled: Config.boolean("HERALD_INBOUND_ENABLED").pipe(Config.withDefault(true)),
  retentionDays: positive("HERALD_INBOUND_RETENTION_DAYS", 30),
  softBounceLimit: checked("HERALD_SOFT_BOUNCE_LIMIT", Config.integer(), "must be at least 1", (n) => n >= 1, 3),
  softBounceWindowDays: positive("HERALD_SOFT_BOUNCE_WINDOW_DAYS", 7),
  dmarcWindowDays: checked("HERALD_DMARC_WINDOW_DAYS", Config.integer(), "must be at least 1", (n) => n >= 1, 7),
  dmarcFailThreshold: checked("HERALD_DMARC_FAIL_THRESHOLD", Config.number(), "must be a fraction from 0 to 1", (n) => n >= 0 && n <= 1, 0.1),
  dmarcMinVolume: checked("HERALD_DMARC_MIN_VOLUME", Config.integer(), "must be at least 1", (n) => n >= 1, 100)
})

export const InboundConfigLive = Layer.effect(InboundConfig, inboundSettings)
