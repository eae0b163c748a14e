/**
 * What Herald's two smtp-server listeners share (the MX listener, src/inbound/listener/, and SMTP
 * submission, src/transactional/submission/): the reply an application error becomes, the TLS
 * certificate read from HERALD_SMTP_TLS_CERT / HERALD_SMTP_TLS_KEY, the per-address connection
 * cap, and a listen that is closed with its scope. Kept small: each listener's rules stay its own.
 */
import * as fs from "node:fs"
import { Effect, Option } from "effect"
import type { SMTPServer } from "smtp-server"

/** An error smtp-server turns into an SMTP reply (`text` starts with the enhanced status code). */
export const smtpReply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code })

export interface TlsFiles {
  readonly cert: Buffer
  readonly key: Buffer
}

/** The PEM certificate and key, when both are configured (read once, at start-up). */
export const readTlsFiles = (cert: Option.Option<string>, key: Option.Option<string>): TlsFiles | undefined =>
  Option.isSome(cert) && Option.isSome(key)
    ? { cert: fs.readFileSync(cert.value), key: fs.readFileSync(key.value) }
    : undefined

/**
 * Open connections per key (a client address, an account): `enter` refuses one past `limit`, and
 * every accepted `enter` is matched by one `leave`. In memory and per process, as the listeners'
 * other limits: what it protects is this process's sockets and memory.
 */
export const makeConnectionCounter = (limit: number) => {
  const open = new Map<string, number>()
  return {
    enter: (key: string): boolean => {
      const n = (open.get(key) ?? 0) + 1
      if (n > limit) return false
      open.set(key, n)
      return true
    },
    leave: (key: string): void => {
      const n = (open.get(key) ?? 1) - 1
      if (n <= 0) open.delete(key)
      else open.set(key, n)
    },
    count: (key: string): number => open.get(key) ?? 0
  }
}

/** Listens on `port`/`host` for the scope's life: closed (its sessions ended) when the scope closes. */
export const listenScoped = (server: SMTPServer, port: number, host: string) =>
  Effect.acquireRelease(
    Effect.async<void, Error>((resume) => {
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen(port, host, () => resume(Effect.void))
    }),
    () => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
  )
