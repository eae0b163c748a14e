/**
 * Configuration that makes the DNS records Herald asks customers to publish unworkable, said once
 * at start-up (warnings, not refusals: a lab or a test runs fine without working DNS).
 *
 * A bare HERALD_HOSTNAME is said only in production: a laptop or a lab machine has one, and a
 * warning at every `npm start` of a trial told the person nothing they could act on there.
 */
import { Effect, Option } from "effect"
import { AppConfig, type AppConfigShape } from "../../config/app-config.ts"

type WarnedConfig = Pick<AppConfigShape, "env" | "hostname" | "smarthostConfigured" | "smarthostSpfInclude">

/** The warnings `config` deserves, each naming the variable that fixes it. */
export const dnsConfigProblems = (config: WarnedConfig): ReadonlyArray<string> => [
  ...(config.env === "production" && !config.hostname.includes(".")
    ? [
      `HERALD_HOSTNAME "${config.hostname}" is a bare machine name (no dot): the return-path MX and SPF records ` +
      "built from it cannot work on the internet; set HERALD_HOSTNAME to this host's public DNS name"
    ]
    : []),
  ...(config.smarthostConfigured && Option.isNone(config.smarthostSpfInclude)
    ? [
      "HERALD_SMARTHOST is set without HERALD_SMARTHOST_SPF_INCLUDE: the return-path SPF record names no sender " +
      "and ends in ~all (SPF never passes, DMARC rests on DKIM); set HERALD_SMARTHOST_SPF_INCLUDE to the relay's SPF domain"
    ]
    : [])
]

export const dnsConfigWarnings = Effect.flatMap(AppConfig, (config) =>
  Effect.forEach(dnsConfigProblems(config), (line) => Effect.logWarning(line), { discard: true }))
