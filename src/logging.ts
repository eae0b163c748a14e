/**
 * Structured logs through Effect's logger: JSON lines (HERALD_LOG_FORMAT=json, the image default),
 * logfmt lines, or pretty lines for a terminal. Request logs carry `request_id`, actor logs `actor`.
 *
 * The JSON lines are flat — `{"timestamp", "level", "message", "request_id", "actor", …}` — so a
 * log shipper or `jq 'select(.request_id == "req_…")'` finds the annotations at the top level
 * (Effect's own `Logger.json` nests them under `annotations`).
 *
 * `serve` logs to stdout (what container runtimes collect); the operator commands log to stderr,
 * so that their stdout carries only the JSON they print. Colours only go to a terminal.
 */
import { Effect, FiberRefs, HashMap, Inspectable, Layer, Logger } from "effect"
import { AppConfig } from "./config/app-config.ts"
import { currentRequest } from "./http/request-context.ts"

/** Fields every line has; an annotation with one of these names is kept as `annotation_<name>`. */
const RESERVED = new Set(["timestamp", "level", "message", "cause", "spans", "fiber"])

/** Where log lines go. */
export type LogStream = "stdout" | "stderr"

const toStream = <Message>(logger: Logger.Logger<Message, string>, stream: LogStream) =>
  stream === "stdout" ? Logger.withConsoleLog(logger) : Logger.withConsoleError(logger)

/** Colour codes only when both the log stream and stdout are terminals, and NO_COLOR is not set. */
export const colorsFor = (stream: LogStream): boolean =>
  process.stdout.isTTY === true && process[stream].isTTY === true && (process.env["NO_COLOR"] ?? "") === ""

const errorToJson = (value: unknown): unknown =>
  value instanceof Error ? { name: value.name, message: value.message } : value

const flatJsonLines = Logger.map(Logger.structuredLogger, (log) => {
  const line: Record<string, unknown> = {
    timestamp: log.timestamp,
    level: log.logLevel,
    message: Array.isArray(log.message) ? log.message.map(errorToJson) : errorToJson(log.message)
  }
  for (const [key, value] of Object.entries(log.annotations)) {
    line[RESERVED.has(key) ? `annotation_${key}` : key] = value
  }
  if (Object.keys(log.spans).length > 0) line["spans"] = log.spans
  if (log.cause !== undefined) line["cause"] = log.cause
  line["fiber"] = log.fiberId
  return Inspectable.stringifyCircular(line)
})

/**
 * A line written while a request is handled carries its `request_id`, read from the request's
 * state (src/http/request-context.ts) when the line is written. A log annotation set on every
 * request would do the same, but it is a FiberRef update per request, paid even when nothing is
 * logged (most requests, at the default level).
 */
const withRequestId = <Message, Output>(logger: Logger.Logger<Message, Output>) =>
  Logger.mapInputOptions(logger, (options: Logger.Logger.Options<Message>) => {
    const { requestId } = FiberRefs.getOrDefault(options.context, currentRequest)
    return requestId === "" ? options : { ...options, annotations: HashMap.set(options.annotations, "request_id", requestId) }
  })

/** The logger of HERALD_LOG_FORMAT and HERALD_LOG_LEVEL, writing to `stream`. */
export const loggingTo = (stream: LogStream) =>
  Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Layer.merge(
        Logger.replace(
          Logger.defaultLogger,
          withRequestId(
            config.logFormat === "json"
              ? toStream(flatJsonLines, stream)
              : config.logFormat === "pretty"
              ? Logger.prettyLogger({ stderr: stream === "stderr", colors: colorsFor(stream) })
              : toStream(Logger.logfmtLogger, stream)
          )
        ),
        Logger.minimumLogLevel(config.logLevel)
      ))
  )

/** The appliance's logging (`serve`, and the in-process appliance of the tests). */
export const LoggingLive = loggingTo("stdout")
