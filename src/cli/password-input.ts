/**
 * The password of `herald accounts set-password`, read from standard input, never from a flag
 * (a flag's value stays in the shell's history and in every `ps` listing): typed at a terminal
 * with echo off, after a prompt on stderr; or piped (`printf '%s' "$PW" | herald accounts
 * set-password …`), the first line of what is piped. Never echoed, never printed.
 */
import { Effect } from "effect"
import { MAX_PASSWORD_LENGTH } from "../lib/password-rules.ts"
import { type OperatorError, usage } from "./output.ts"

/** Bytes read from a pipe at most: a password of the longest length in 4-byte characters and its newline. */
const MAX_INPUT_BYTES = MAX_PASSWORD_LENGTH * 4 + 2

const CTRL_C = "\u0003"
const CTRL_D = "\u0004"
const BACKSPACE = new Set(["\u007f", "\b"])

/** A line typed at the terminal with echo off (raw mode: nothing the person types is shown). */
const fromTerminal = (stdin: NodeJS.ReadStream) =>
  Effect.async<string, OperatorError>((resume) => {
    process.stderr.write("New password: ")
    let typed = ""
    const finish = (result: Effect.Effect<string, OperatorError>) => {
      stdin.off("data", onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write("\n")
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === CTRL_C || char === CTRL_D) return finish(Effect.fail(usage("no password given")))
        if (char === "\r" || char === "\n") return finish(Effect.succeed(typed))
        if (BACKSPACE.has(char)) typed = [...typed].slice(0, -1).join("")
        else typed += char
        if (typed.length > MAX_PASSWORD_LENGTH) return finish(Effect.fail(usage(`password must be at most ${MAX_PASSWORD_LENGTH} characters`)))
      }
    }
    stdin.setRawMode(true)
    stdin.on("data", onData)
    stdin.resume()
  })

/** The first line piped in (without its line ending). */
const fromPipe = (stdin: NodeJS.ReadStream) =>
  Effect.async<string, OperatorError>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const done = (result: Effect.Effect<string, OperatorError>) => {
      stdin.off("data", onData)
      stdin.off("end", onEnd)
      stdin.pause()
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      if (chunk.includes(0x0a) || size > MAX_INPUT_BYTES) onEnd()
    }
    const onEnd = () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const newline = text.indexOf("\n")
      if (newline === -1 && size > MAX_INPUT_BYTES) return done(Effect.fail(usage(`password must be at most ${MAX_PASSWORD_LENGTH} characters`)))
      done(Effect.succeed((newline === -1 ? text : text.slice(0, newline)).replace(/\r$/, "")))
    }
    stdin.on("data", onData)
    stdin.once("end", onEnd)
    stdin.resume()
  })

export const readPassword: Effect.Effect<string, OperatorError> = Effect.suspend(() =>
  process.stdin.isTTY === true ? fromTerminal(process.stdin) : fromPipe(process.stdin)
)
