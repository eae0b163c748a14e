/**
 * SMTP submission (RFC 6409) for the applications that can only speak SMTP: smtp-server on
 * HERALD_SUBMISSION_PORT (STARTTLS when a certificate is configured) and, with a certificate, on
 * HERALD_SUBMISSION_TLS_PORT (implicit TLS, RFC 8314), both on HERALD_SMTP_HOST. A message
 * submitted here is a transactional send in every respect (submit.ts); the session's rules are in
 * session.ts. Without a certificate STARTTLS is not offered and AUTH works only from loopback:
 * start-up says so in one line.
 */
import type * as net from "node:net"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, Runtime } from "effect"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import { AppConfig } from "../../config/app-config.ts"
import { AuthFailures } from "../../http/auth-failures.ts"
import { BodyBudgetService } from "../../http/body-budget.ts"
import { KeyLookup } from "../../http/key-lookup.ts"
import { listenScoped, readTlsFiles } from "../../lib/smtp-listener.ts"
import { BlockedDomains } from "../../platform/suppressions/BlockedDomains.ts"
import { Accept } from "../accept.ts"
import { SendContext } from "../send-context.ts"
import { watchCommandLines } from "./command-timeout.ts"
import { makeSessionHandlers } from "./session.ts"
import { makeSenderFactsReader } from "./sender-facts.ts"
import { submit } from "./submit.ts"

/** smtp-server keeps its connections in a Set of objects with their session id and `close`. */
interface ServerConnections {
  readonly connections: Set<{ readonly id: string; close: () => void }>
}

export const SubmissionListenerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const accept = yield* Accept
    const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
    const runPromise = Runtime.runPromise(runtime)
    const clock = yield* Effect.clock
    const tls = readTlsFiles(config.smtpTlsCert, config.smtpTlsKey)
    const servers: Array<SMTPServer> = []
    const submitOptions = {
      sizes: { maxAttachmentBytes: config.maxAttachmentBytes, maxTotalBytes: config.maxTotalAttachmentsBytes },
      maxRecipients: config.maxRecipients,
      readFacts: yield* makeSenderFactsReader(config.domainGraceHours)
    }
    const handlers = makeSessionHandlers({
      run: runPromise,
      // Read at once, not through runSync: a fiber for each reading was a visible cost in bench:submission.
      now: () => clock.unsafeCurrentTimeMillis(),
      maxPerIp: config.smtpMaxPerIp,
      maxJsonBytes: config.maxJsonBytes,
      dataDeadlineMs: config.submissionDataTimeoutMs,
      budget: yield* BodyBudgetService,
      submitOptions,
      failures: yield* AuthFailures,
      keys: yield* KeyLookup,
      sendContext: yield* SendContext,
      blocked: yield* BlockedDomains,
      submit: (transaction, envelope, raw, now) =>
        Effect.provideService(submit(transaction, envelope, raw, now, submitOptions), Accept, accept).pipe(
          Effect.provide(runtime.context)
        ),
      close: (id) => {
        for (const server of servers) {
          for (const connection of (server as unknown as ServerConnections).connections) if (connection.id === id) connection.close()
        }
      }
    })
    const options: SMTPServerOptions = {
      name: config.hostname,
      banner: "Herald ESMTP submission",
      size: config.maxJsonBytes,
      maxClients: config.smtpMaxClients,
      authMethods: ["PLAIN", "LOGIN"],
      // Herald decides (session.ts): AUTH in clear only from loopback, MAIL before AUTH answered 530 with its own text.
      allowInsecureAuth: true,
      authOptional: true,
      disableReverseLookup: true,
      // The idle timeout: a client that sends nothing for this long is answered 421 and closed.
      socketTimeout: config.submissionIdleTimeoutMs,
      closeTimeout: 5_000,
      logger: false,
      ...handlers,
      onSecure(socket, _session, callback) {
        watchCommandLines(socket, config.submissionCommandTimeoutMs)
        callback()
      }
    }
    const watchConnections = (server: SMTPServer) =>
      server.server.on("connection", (socket: net.Socket) => watchCommandLines(socket, config.submissionCommandTimeoutMs))
    const starttls = new SMTPServer({ ...options, ...(tls === undefined ? { disabledCommands: ["STARTTLS"] } : tls) })
    servers.push(starttls)
    watchConnections(starttls)
    yield* listenScoped(starttls, config.submissionPort, config.smtpHost)
    if (tls !== undefined) {
      const implicit = new SMTPServer({ ...options, ...tls, secure: true })
      servers.push(implicit)
      watchConnections(implicit)
      yield* listenScoped(implicit, config.submissionTlsPort, config.smtpHost)
    }
    yield* Effect.logInfo(
      tls === undefined
        ? "SMTP submission ready without TLS (no HERALD_SMTP_TLS_CERT/KEY): STARTTLS is not offered and AUTH works only from loopback"
        : "SMTP submission ready: STARTTLS and implicit TLS"
    ).pipe(Effect.annotateLogs({
      actor: "submission",
      port: config.submissionPort,
      ...(tls === undefined ? {} : { tls_port: config.submissionTlsPort })
    }))
  })
)
