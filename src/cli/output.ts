/**
 * What operator commands print: the result as JSON on stdout; a refusal as
 * `{"error": {"code", "message"}}` on stderr with exit code 1 (no stack trace, no log noise).
 */
import { Console, Data, Effect } from "effect"

/** A refusal with a message for the operator (bad arguments, unknown ids). */
export class OperatorError extends Data.TaggedError("OperatorError")<{
  readonly code: string
  readonly message: string
}> {}

export const usage = (message: string) => new OperatorError({ code: "invalid_arguments", message })

const field = (error: object, name: string): string => String((error as Record<string, unknown>)[name] ?? "")

/** The domain errors of the services the commands call, in words. */
const describe = (error: unknown): { readonly code: string; readonly message: string } => {
  if (error instanceof OperatorError) return { code: error.code, message: error.message }
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
    }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { code: "error", message }
}

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** Runs a command's effect and prints its result, or its refusal (exit code 1). */
export const operatorCommand = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  effect.pipe(
    Effect.flatMap(printJson),
    Effect.catchAll((error) =>
      Console.error(JSON.stringify({ error: describe(error) })).pipe(
        Effect.zipRight(Effect.sync(() => {
          process.exitCode = 1
        }))
      ))
  )
