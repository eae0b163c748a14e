/**
 * Configuration that makes the DNS records Herald asks customers to publish unworkable, said once
 * at start-up (warnings, not refusals: a lab or a test runs fine without working DNS).
 */
import { Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"

export const dnsConfigWarnings = Effect.gen(function*() {
  const config = yield* AppConfig
  if (!config.hostname.includes(".")) {
    yield* Effect.logWarning(
      `HERALD_HOSTNAME "${config.hostname}" is a bare machine name (no dot): the return-path MX and SPF records ` +
        "built from it cannot work on the internet; set HERALD_HOSTNAME to this host's public DNS name"
    )
  }
  if (config.smarthostConfigured && Option.isNone(config.smarthostSpfInclude)) {
    yield* Effect.logWarning(
      "HERALD_SMARTHOST is set without HERALD_SMARTHOST_SPF_INCLUDE: the return-path SPF record names no sender " +
        "and ends in ~all (SPF never passes, DMARC rests on DKIM); set HERALD_SMARTHOST_SPF_INCLUDE to the relay's SPF domain"
    )
  }
})
