/**
 * Structured logs through Effect's logger: JSON lines (HERALD_LOG_FORMAT=json, the image default),
 * logfmt lines, or pretty lines for a terminal. Request logs carry `request_id`, actor logs `actor`.
 */
import { Effect, Layer, Logger } from "effect"
import { AppConfig } from "./config/app-config.ts"

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json" ? Logger.json : config.logFormat === "pretty" ? Logger.pretty : Logger.logFmt,
      Logger.minimumLogLevel(config.logLevel)
    ))
)
