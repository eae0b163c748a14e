/**
 * What operator commands print: the result as JSON on stdout, and nothing else there (their logs
 * go to stderr, see main.ts); a refusal as one line `{"error": {"code", "message"}}` on stderr
 * with exit code 1 — never a stack trace or an internal structure.
 *
 * Both are written to the process's streams directly, not through Effect's Console: main.ts gives
 * the Console to the command-line parser and to the loggers.
 */
import { Cause, ConfigError, Data, Effect } from "effect"

/** A refusal with a message for the operator (bad arguments, unknown ids). */
export class OperatorError extends Data.TaggedError("OperatorError")<{
  readonly code: string
  readonly message: string
}> {}

export const usage = (message: string) => new OperatorError({ code: "invalid_arguments", message })

export interface Refusal {
  readonly code: string
  readonly message: string
}

const field = (error: object, name: string): string => String((error as Record<string, unknown>)[name] ?? "")

/** The domain errors of the services the commands call, in words. */
const describe = (error: unknown): Refusal => {
  if (error instanceof OperatorError) return { code: error.code, message: error.message }
  if (ConfigError.isConfigError(error)) return { code: "invalid_configuration", message: String(error).replace(/^\(|\)$/g, "") }
  if (typeof error === "object" && error !== null && "_tag" in error) {
    switch (error._tag) {
      case "AccountNotFound":
        return { code: "not_found", message: `no account ${field(error, "id")}` }
      case "KeyNotFound":
        return { code: "not_found", message: `no key ${field(error, "id")}` }
      case "SuppressionNotFound":
        return { code: "not_found", message: `${field(error, "email")} is not on that suppression list` }
      case "DomainNotFound":
        return { code: "not_found", message: `${field(error, "domain")} is not registered for that account` }
      case "BlockedDomainNotFound":
        return { code: "not_found", message: `${field(error, "domain")} is not blocked` }
      case "EmailTaken":
        return { code: "conflict", message: `an account with ${field(error, "email")} exists` }
      case "UnknownPackage":
        return { code: "not_found", message: `no plan ${field(error, "packageId")}` }
      case "SqlError":
        return { code: "database_unavailable", message: `the database failed: ${field(error, "message")}` }
    }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { code: "error", message }
}

/** Colour and cursor codes (ESC [ … letter): what a terminal renders, and a pipe must not get. */
const ANSI_SEQUENCE = /\u001b\[[0-9;?]*[A-Za-z]/g

export const stripAnsi = (text: string): string => text.replace(ANSI_SEQUENCE, "")

/** `text` as written to `stream`: escape codes only when it is a terminal. */
export const forStream = (stream: NodeJS.WriteStream, text: string): string => (stream.isTTY === true ? text : stripAnsi(text))

const writeLine = (stream: NodeJS.WriteStream, line: string) => Effect.sync(() => void stream.write(`${line}\n`))

export const printJson = (value: unknown) => writeLine(process.stdout, JSON.stringify(value, null, 2))

/** Prints the refusal on stderr and makes the process exit with code 1. */
export const printRefusal = (refusal: Refusal) =>
  writeLine(process.stderr, JSON.stringify({ error: { code: refusal.code, message: stripAnsi(refusal.message) } })).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

export const refuse = (error: unknown) => printRefusal(describe(error))

/**
 * What a failed command ends with: its error as a refusal; a defect (a bug) as `internal_error`
 * with its message only. An interruption (Ctrl-C) is no refusal.
 */
export const refuseCause = <E>(cause: Cause.Cause<E>): Effect.Effect<void> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") return refuse(failure.value)
  const defect = Cause.squash(cause)
  return printRefusal({ code: "internal_error", message: defect instanceof Error ? defect.message : String(defect) })
}

/** Runs a command's effect and prints its result, or its refusal (exit code 1). */
export const operatorCommand = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  effect.pipe(Effect.flatMap(printJson), Effect.catchAllCause(refuseCause))
