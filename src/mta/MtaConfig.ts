/** Configuration of the outbound MTA (every variable in docs/configuration.md and config/example.env). */
import * as fs from "node:fs"
import { rootCertificates } from "node:tls"
import { Config, ConfigError, Context, Effect, Layer, Option } from "effect"
import { checked } from "../config/app-config.ts"
import { processShare } from "../config/process-share.ts"
import type { Hop } from "./smtp-client.ts"

export interface MtaSettings {
  readonly enabled: boolean
  readonly mxPort: number
  readonly smarthost: Option.Option<Hop>
  /** HERALD_SMARTHOST_TLS_VERIFY: check the smarthost's certificate (false only for a self-signed relay). */
  readonly smarthostTlsVerify: boolean
  readonly maxAgeMs: number
  readonly concurrency: number
  /** HERALD_MTA_MESSAGE_BUDGET_MB, in bytes: message content the attempts in hand may hold (message-budget.ts). */
  readonly messageBudgetBytes: number
  readonly leaseMs: number
  readonly shapingFile: string | undefined
  /** HERALD_MTA_STS: honour recipients' MTA-STS policies and send TLS-RPT reports (never with a smarthost). */
  readonly mtaSts: boolean
  /** HERALD_MTA_STS_PORT: where policies are fetched (443; tests and staging move it). */
  readonly mtaStsPort: number
  /** The system's CA certificates plus HERALD_TLS_CA_FILE's; undefined when that is unset (Node's defaults). */
  readonly tlsCa: ReadonlyArray<string> | undefined
  /** HERALD_TLSRPT_FROM; unset: tlsrpt@<HERALD_BOUNCE_DOMAIN>. */
  readonly tlsRptFrom: string | undefined
}

export class MtaConfig extends Context.Tag("herald/MtaConfig")<MtaConfig, MtaSettings>() {}

/**
 * smtp://user:pass@host:587 (STARTTLS; required when credentials are given) or smtps://…:465 (TLS
 * from the start). The relay's certificate is verified unless `verifyCertificate` is false.
 */
export const parseSmarthost = (raw: string, verifyCertificate = true): Hop | string => {
  try {
    const url = new URL(raw)
    if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return "must be an smtp:// or smtps:// URL"
    const secure = url.protocol === "smtps:"
    return {
      host: url.hostname,
      port: url.port === "" ? (secure ? 465 : 587) : Number(url.port),
      secure,
      verifyCertificate,
      auth: url.username === "" ? undefined : { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
    }
  } catch {
    return "must be a URL such as smtp://user:password@relay.example:587"
  }
}

export const MtaConfigLive = Layer.effect(MtaConfig, Effect.gen(function*() {
  const rawSmarthost = yield* Config.option(Config.string("HERALD_SMARTHOST"))
  const smarthostTlsVerify = yield* Config.boolean("HERALD_SMARTHOST_TLS_VERIFY").pipe(Config.withDefault(true))
  const parsed = Option.map(rawSmarthost, (raw) => parseSmarthost(raw, smarthostTlsVerify))
  if (Option.isSome(parsed) && typeof parsed.value === "string") {
    return yield* Effect.fail(ConfigError.InvalidData(["HERALD_SMARTHOST"], parsed.value))
  }
  const smarthost = Option.filterMap(parsed, (hop) => (typeof hop === "string" ? Option.none() : Option.some(hop)))
  const caFile = Option.getOrUndefined(yield* Config.option(Config.string("HERALD_TLS_CA_FILE")))
  const extraCa = caFile === undefined ? undefined : yield* Effect.try({
    try: () => fs.readFileSync(caFile, "utf8"),
    catch: () => ConfigError.InvalidData(["HERALD_TLS_CA_FILE"], `cannot read ${caFile}`)
  })
  const mtaStsSwitch = yield* Config.literal("on", "off")("HERALD_MTA_STS").pipe(Config.withDefault("on" as const))
  return {
    enabled: yield* Config.boolean("HERALD_MTA_ENABLED").pipe(Config.withDefault(true)),
    mxPort: yield* checked("HERALD_MX_PORT", Config.integer(), "must be a port number", (n) => n > 0 && n < 65536, 25),
    smarthost,
    smarthostTlsVerify,
    maxAgeMs: (yield* checked("HERALD_QUEUE_MAX_AGE_HOURS", Config.number(), "must be more than 0", (n) => n > 0, 120)) * 3_600_000,
    // Per appliance: each of HERALD_PROCESSES workers takes its share (process-share.ts).
    concurrency: processShare.count(yield* checked("HERALD_MTA_CONCURRENCY", Config.integer(), "must be at least 1", (n) => n >= 1, 100)),
    messageBudgetBytes: processShare.count(
      (yield* checked("HERALD_MTA_MESSAGE_BUDGET_MB", Config.number(), "must be a positive number of megabytes", (n) => n > 0, 64)) * 1_048_576
    ),
    leaseMs: (yield* checked("HERALD_QUEUE_LEASE_SECONDS", Config.integer(), "must be at least 5", (n) => n >= 5, 120)) * 1000,
    shapingFile: Option.getOrUndefined(yield* Config.option(Config.string("HERALD_SHAPING_FILE"))),
    mtaSts: mtaStsSwitch === "on" && Option.isNone(smarthost),
    mtaStsPort: yield* checked("HERALD_MTA_STS_PORT", Config.integer(), "must be a port number", (n) => n > 0 && n < 65536, 443),
    // Node's `ca` replaces the default roots: the extra file is trusted in addition to them.
    tlsCa: extraCa === undefined ? undefined : [...rootCertificates, extraCa],
    tlsRptFrom: Option.getOrUndefined(yield* Config.option(Config.string("HERALD_TLSRPT_FROM")))
  }
}))
