/**
 * Destination shaping (pure): the limits for a recipient domain, resolved domain → MX suffix →
 * default, from config/shaping.json or HERALD_SHAPING_FILE.
 */
import * as fs from "node:fs"
import { Schema } from "effect"

/** The first pause after a destination asks to slow down (421 / 4.7.x), when a file names none. */
export const DEFAULT_BACKOFF_SECONDS = 60

const Limits = {
  max_connections: Schema.Int.pipe(Schema.positive()),
  messages_per_connection: Schema.Int.pipe(Schema.positive()),
  max_messages_per_minute: Schema.NullOr(Schema.Int.pipe(Schema.positive())),
  /** The first pause after a 421 / 4.7.x (doubling while the site keeps asking, up to an hour). */
  backoff_seconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 3_600)))
}

export const ShapingFile = Schema.Struct({
  default: Schema.Struct(Limits),
  providers: Schema.Array(Schema.Struct({
    name: Schema.String,
    domains: Schema.Array(Schema.String),
    mx_suffixes: Schema.Array(Schema.String),
    ...Limits
  }))
})
export type ShapingFile = typeof ShapingFile.Type

export interface Shaping {
  readonly name: string
  readonly maxConnections: number
  readonly messagesPerConnection: number
  readonly maxMessagesPerMinute: number | null
  /** The first pause after the site asks to slow down. */
  readonly backoffMs: number
}

export const loadShapingFile = (path: string | undefined): ShapingFile => {
  const file = path ?? new URL("../../config/shaping.json", import.meta.url)
  return Schema.decodeUnknownSync(ShapingFile)(JSON.parse(fs.readFileSync(file, "utf8")))
}

export const resolveShaping = (file: ShapingFile, domain: string, mxHosts: ReadonlyArray<string> = []): Shaping => {
  const d = domain.toLowerCase()
  const provider = file.providers.find((p) => p.domains.includes(d)) ??
    file.providers.find((p) => mxHosts.some((h) => p.mx_suffixes.some((s) => h.toLowerCase() === s || h.toLowerCase().endsWith(`.${s}`))))
  const limits = provider ?? file.default
  return {
    name: provider?.name ?? "default",
    maxConnections: limits.max_connections,
    messagesPerConnection: limits.messages_per_connection,
    maxMessagesPerMinute: limits.max_messages_per_minute,
    backoffMs: (limits.backoff_seconds ?? DEFAULT_BACKOFF_SECONDS) * 1_000
  }
}
