/**
 * The MX listener (smtp-server): Herald is MX for its bounce domain. A message is answered 250
 * only after its raw bytes are committed to PostgreSQL; parsing happens later in the inbound
 * actor. Limits: message size (552 past HERALD_SMTP_MAX_MESSAGE_MB, enforced by smtp-server after
 * DATA), total and per-IP connections (421), messages per minute per address (451 at MAIL FROM),
 * socket timeouts; STARTTLS when a certificate is set.
 * Memory: no connection holds a whole large message. DATA is read a piece at a time against one
 * byte budget for all connections (HERALD_SMTP_INBOUND_BUDGET_MB) and staged to PostgreSQL in
 * chunks as it arrives (receive.ts); a session that finds no room stops reading its socket until
 * there is, and is answered 451 if none comes within BUDGET_WAIT_MS.
 */
import type { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Runtime, Schedule } from "effect"
import { SMTPServer, type SMTPServerSession } from "smtp-server"
import { AppConfig } from "../../config/app-config.ts"
import { listenScoped, makeConnectionCounter, readTlsFiles, smtpReply as reply } from "../../lib/smtp-listener.ts"
import { ByteBudget } from "./ByteBudget.ts"
import { InboundStore, type ReceivedEnvelope } from "./InboundStore.ts"
import { MessageRate, SYNC_MS } from "./rate.ts"
import { receiveMessage } from "./receive.ts"
import { recipientDecision, returnPathVerified } from "./recipients.ts"

/**
 * A message larger than this is staged to PostgreSQL in chunks of this size; a smaller one (nearly
 * every bounce, complaint and report) is held whole and goes through the group commit.
 */
const CHUNK_BYTES = 256 * 1024
/**
 * How long a session waits for room in the byte budget before 451: well inside smtp-server's
 * 60 s socket timeout, which a sender held back by TCP would otherwise run into.
 */
const BUDGET_WAIT_MS = 20_000

const envelopeOf = (session: SMTPServerSession): ReceivedEnvelope => ({
  remoteAddress: session.remoteAddress,
  helo: session.hostNameAppearsAs ?? null,
  mailFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
  rcptTo: session.envelope.rcptTo.map((r) => r.address)
})

export const MxListenerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* InboundStore
    const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
    const run = Runtime.runPromise(runtime)
    // The clock itself, read per MAIL FROM: a Runtime.runSync per command was a fiber each (measured
    // with bench:inbound: a visible share of the listener's CPU per message).
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const fixedDomains = new Set([config.bounceDomain, ...config.inboundDomains])
    const perIp = makeConnectionCounter(config.smtpMaxPerIp)
    const budget = new ByteBudget(config.smtpInboundBudgetBytes)
    const rate = new MessageRate(config.smtpMaxMessagesPerMinutePerIp)
    // The per-address message counts join every process's each SYNC_MS (rate.ts); a failed sync
    // keeps them for the next one (the database's own trouble is reported where it matters).
    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap((at) => rate.sync(at)),
      Effect.ignore,
      Effect.repeat(Schedule.spaced(Duration.millis(SYNC_MS))),
      Effect.forkScoped
    )
    const tls = readTlsFiles(config.smtpTlsCert, config.smtpTlsKey)

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
        if (!perIp.enter(session.remoteAddress)) return callback(reply(421, "4.7.0 Too many connections from your address"))
        callback()
      },
      onClose(session) {
        perIp.leave(session.remoteAddress)
      },
      onMailFrom(_address, session, callback) {
        if (rate.admit(session.remoteAddress, now())) return callback()
        callback(reply(451, "4.7.1 Too many messages from your address, try again later"))
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
        const envelope = envelopeOf(session)
        // Durable before acknowledged: 250 only once the row with every byte is committed.
        receiveMessage(stream, {
          budget,
          chunkBytes: CHUNK_BYTES,
          waitMs: BUDGET_WAIT_MS,
          newId: store.newMessageId,
          storeWhole: (raw) => run(store.store(envelope, raw)),
          stage: (id, seq, data) => run(store.stageChunk(id, seq, data)),
          storeStaged: (id, size) => run(store.storeStaged(id, envelope, size)),
          discardStaged: (id) => run(store.discardStaged(id))
        }).then((received) => {
          if (received.kind === "stored") return callback(null, `2.0.0 Ok: queued as ${received.id}`)
          if (received.kind === "too_big") return callback(reply(552, "5.3.4 Message too big"))
          callback(reply(451, "4.3.1 Too much inbound mail in progress, try again later"))
        }).catch((error: unknown) => {
          run(Effect.logError("could not store an inbound message", error)).catch(() => undefined)
          callback(reply(451, "4.3.0 Temporary failure storing the message, try again later"))
        })
      }
    })

    yield* listenScoped(server, config.smtpPort, config.smtpHost)
    yield* Effect.logInfo("MX listener ready").pipe(
      Effect.annotateLogs({ actor: "mx-listener", port: config.smtpPort, domains: [...fixedDomains].join(",") })
    )
  })
)
