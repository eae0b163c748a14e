/**
 * The MX listener (smtp-server): Herald is MX for its bounce domain. A message is answered 250
 * only after its raw bytes are committed to PostgreSQL; parsing happens later in the inbound
 * actor. Limits: message size (552 past HERALD_SMTP_MAX_MESSAGE_MB, enforced by smtp-server after
 * DATA), total and per-IP connections (421), socket timeouts; STARTTLS when a certificate is set.
 */
import * as fs from "node:fs"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Runtime } from "effect"
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server"
import { AppConfig } from "../../config/app-config.ts"
import { recipientDecision, returnPathVerified } from "./recipients.ts"
import { InboundStore } from "./InboundStore.ts"

/** An error smtp-server turns into an SMTP reply. */
const reply = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code })

const readAll = (stream: SMTPServerDataStream) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => {
      // Past the limit smtp-server keeps counting but we stop keeping: it will answer 552.
      if (!stream.sizeExceeded) chunks.push(chunk)
    })
    stream.once("error", reject)
    stream.once("end", () => resolve(Buffer.concat(chunks)))
  })

export const MxListenerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* InboundStore
    const run = Runtime.runPromise(yield* Effect.runtime<SqlClient.SqlClient>())
    const fixedDomains = new Set([config.bounceDomain, ...config.inboundDomains])
    const perIp = new Map<string, number>()
    const tls = Option.isSome(config.smtpTlsCert) && Option.isSome(config.smtpTlsKey)
      ? { cert: fs.readFileSync(config.smtpTlsCert.value), key: fs.readFileSync(config.smtpTlsKey.value) }
      : undefined

    const server = new SMTPServer({
      name: config.hostname,
      banner: "Herald ESMTP",
      size: config.smtpMaxMessageBytes,
      maxClients: config.smtpMaxClients,
      authOptional: true,
      disabledCommands: tls === undefined ? ["AUTH", "STARTTLS"] : ["AUTH"],
      ...(tls ?? {}),
      socketTimeout: 60_000,
      closeTimeout: 5_000,
      logger: false,
      onConnect(session, callback) {
        const ip = session.remoteAddress
        const open = (perIp.get(ip) ?? 0) + 1
        if (open > config.smtpMaxPerIp) return callback(reply(421, "4.7.0 Too many connections from your address"))
        perIp.set(ip, open)
        callback()
      },
      onClose(session) {
        const open = (perIp.get(session.remoteAddress) ?? 1) - 1
        if (open <= 0) perIp.delete(session.remoteAddress)
        else perIp.set(session.remoteAddress, open)
      },
      onRcptTo(address, _session, callback) {
        const relayDenied = () => reply(550, "5.7.1 Relaying denied: this server only accepts mail for its own domains")
        const decision = recipientDecision(address.address, fixedDomains)
        if (typeof decision === "boolean") return callback(decision ? undefined : relayDenied())
        run(returnPathVerified(decision.customerDomain)).then(
          (ok) => callback(ok ? undefined : relayDenied()),
          () => callback(reply(451, "4.3.0 Temporary failure, try again later"))
        )
      },
      onData(stream, session: SMTPServerSession, callback) {
        readAll(stream).then(async (raw) => {
          if (stream.sizeExceeded) return callback(reply(552, "5.3.4 Message too big"))
          const envelope = {
            remoteAddress: session.remoteAddress,
            helo: session.hostNameAppearsAs ?? null,
            mailFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((r) => r.address)
          }
          // Durable before acknowledged: 250 only after the INSERT committed.
          const id = await run(store.store(envelope, raw))
          callback(null, `2.0.0 Ok: queued as ${id}`)
        }).catch((error: unknown) => {
          run(Effect.logError("could not store an inbound message", error)).catch(() => undefined)
          callback(reply(451, "4.3.0 Temporary failure storing the message, try again later"))
        })
      }
    })

    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(config.smtpPort, config.smtpHost, () => resume(Effect.void))
      }),
      () => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
    )
    yield* Effect.logInfo("MX listener ready").pipe(
      Effect.annotateLogs({ actor: "mx-listener", port: config.smtpPort, domains: [...fixedDomains].join(",") })
    )
  })
)
