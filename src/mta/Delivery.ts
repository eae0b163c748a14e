/**
 * One delivery attempt, as a short story told in named steps (as Postal's dequeuer and KumoMTA's
 * dispatcher read): decide (may it go at all), load (the message, decoded), route (MX hosts, or
 * the smarthost), compose and sign (once per message; a campaign or sequence message rendered for
 * its contact by the bulk area first, through the BulkContent port), send (the SMTP transaction
 * under the destination's limits, from the VERP return path), classify (the reply) and record
 * (the outcome written with its event).
 *
 * The MTA does not trust what the sending API accepted: rows of older versions, or rows written
 * some other way, reach it too. A delivery claimed again and again without an outcome, a stored
 * message too large to read, one that does not decode (src/mta/queue/StoredMessage.ts), one too
 * many-parted to compose, or one whose composing fails: each fails its delivery with its origin's
 * failure event — never the process, which every other delivery depends on.
 *
 * The database work of an attempt is two statements shared with every attempt running at the
 * same time (src/mta/delivery/group-io.ts): one reads the messages with their sending domain's
 * row, one writes the outcomes with their events.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Either, Option } from "effect"
import { AppConfig } from "../config/app-config.ts"
import type { Dns } from "../lib/dns.ts"
import { returnPathDomain } from "../platform/domains/records.ts"
import { Reputation } from "../platform/reputation/Reputation.ts"
import { isSimulatorAddress } from "../lib/simulator.ts"
import { classifyReply } from "./classify.ts"
import { BulkContent, type RenderedReference } from "./compose/BulkContent.ts"
import { composeStored } from "./compose/compose.ts"
import { makeRenderAtDelivery } from "./compose/render-at-delivery.ts"
import { makeGroupIo } from "./delivery/group-io.ts"
import { type Held, makeHeldMessages } from "./delivery/held-messages.ts"
import { APPLIANCE_SIGNER, makeLookups } from "./delivery/lookups.ts"
import { TLSRPT_DKIM_SELECTOR, tlsRptKeyPem } from "./tls-rpt/appliance-key.ts"
import type { SigningKey } from "./dkim.ts"
import { Destinations } from "./Destinations.ts"
import { MtaConfig } from "./MtaConfig.ts"
import { type ActivePolicy, MtaSts } from "./mta-sts/MtaSts.ts"
import { mxMatches } from "./mta-sts/policy.ts"
import { publicTargets } from "./mx.ts"
import { type ClaimedDelivery, DeliveryQueue, type LoadedMessage, type MessageForDelivery, type Outcome } from "./queue/DeliveryQueue.ts"
import { decideDelivery } from "./queue/delivery-checks.ts"
import type { StoredMessage } from "./queue/StoredMessage.ts"
import { abandonedReason, isExpired, retryDelayMs } from "./retry-schedule.ts"
import { complainsAfter, completeWithComplaint, simulatedOutcome } from "./simulator.ts"
import { type Hop, SmtpClient, type SentReply } from "./smtp-client.ts"
import { encodeVerp } from "./verp.ts"
import { VerpSecret } from "./VerpSecret.ts"
import { recordSmtpReply } from "../lib/metrics.ts"

/**
 * The attempt ended before its last step, with its outcome written (`written`: on record) or the
 * delivery given back (held, or refused by the destination for now: nothing written).
 */
class Done {
  private static readonly onRecord = new Done(true)
  static readonly notWritten = new Done(false)
  static of(written: boolean): Done {
    return written ? Done.onRecord : Done.notWritten
  }
  private constructor(readonly written: boolean) {}
}

/** The message of an attempt, loaded: its row with the sending domain's, and the stored message decoded. */
interface Loaded {
  readonly m: LoadedMessage
  readonly domainId: string
  readonly selector: string
  readonly stored: StoredMessage
}

/** Where an attempt goes: the MX hosts (for the destination's limits) and the hops to try, in order. */
interface Routed {
  readonly hosts: ReadonlyArray<string>
  readonly hops: ReadonlyArray<Hop>
  /** The recipient domain's MTA-STS mode (recorded with the attempt); null: none applies. */
  readonly mtaSts: ActivePolicy["mode"] | null
}

/** The message signed for this recipient, and the subject its render gave (campaign and sequence mail). */
interface Composed {
  readonly raw: Buffer
  readonly subject: string | undefined
}

/** A failure that may pass: tried again at the retry schedule's time, or failed for good past the queue's maximum age. */
const retryOrFailWithin = (maxAgeMs: number) => (d: ClaimedDelivery, code: number | null, status: string, reply: string, now: Date): Outcome =>
  isExpired(d.created_at, now, maxAgeMs)
    ? { _tag: "failed", code, status, reply: `gave up after ${d.attempts + 1} attempts: ${reply}` }
    : { _tag: "deferred", code, status, reply, retryAt: new Date(now.getTime() + retryDelayMs(d.attempts + 1)) }

/**
 * The attempt's SMTP connection waits for its outcome: `recorded` settles when the attempt is over
 * (its outcome on record, or the attempt failed or was interrupted), and only then does the pool
 * give the connection to the next transaction. Without it the connection went on sending while
 * outcomes waited for their commit, and a crash then sent again every message accepted meanwhile.
 */
const withOutcomeGate = <A, E, R>(use: (recorded: Promise<void>) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      let open = () => {}
      const promise = new Promise<void>((resolve) => (open = resolve))
      return { promise, open }
    }),
    (gate) => use(gate.promise),
    (gate) => Effect.sync(gate.open)
  )

/** Told when the attempt is done with the destination's connection; `refused`: it was not taken now. */
type LeftDestination = (refused: boolean) => Effect.Effect<void, never, Dns>

export class Delivery extends Effect.Service<Delivery>()("herald/Delivery", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const mta = yield* MtaConfig
    const queue = yield* DeliveryQueue
    const destinations = yield* Destinations
    const reputation = yield* Reputation
    const sql = yield* SqlClient.SqlClient
    // Campaign and sequence messages are rendered per contact by the bulk area (the BulkContent port) before they are composed.
    const bulk = yield* BulkContent
    const mtaSts = yield* MtaSts
    const rendering = makeRenderAtDelivery(bulk)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const smtp = yield* Effect.acquireRelease(Effect.sync(() => new SmtpClient()), (client) => Effect.sync(() => client.close()))

    const verpSecret = (yield* VerpSecret).value
    /**
     * The largest stored request an attempt reads: twice MAX_JSON_MB. The API stores the request
     * it accepted (re-serialized, one personalization each: never much larger than the body), so
     * only a row written some other way is larger — and reading it would put all of it, and more
     * to parse it, in the heap.
     */
    const maxStoredBytes = 2 * config.maxJsonBytes
    /** Production delivers only to public MX addresses; HERALD_MX_PORT moved off 25 means a test or staging set-up on loopback. */
    const publicMxOnly = config.env === "production" && mta.mxPort === 25

    const { keyOf, routeOf, targetsOf } = makeLookups(queue, Effect.provideService(tlsRptKeyPem, SqlClient.SqlClient, sql))
    // Concurrent attempts read their messages and write their outcomes a group per statement.
    const { messageOf, complete, fail, failUnread, hold: holdGroup } = yield* makeGroupIo(queue, now, destinations.shapingNameOf)
    const { holding, decodedOf, signedOf } = makeHeldMessages()
    /** The message as its delivery gets it: a campaign message's tracking tokens name its (only) delivery; other messages ignore it. */
    const composeFor = (d: ClaimedDelivery, loaded: Loaded, rendered: RenderedReference | undefined) => () =>
      composeStored(loaded.stored, {
        messageId: loaded.m.id,
        sendingDomain: loaded.m.from_domain,
        date: loaded.m.created_at,
        // Only account mail can be a campaign or sequence reference; system mail has no account.
        ...(d.account_id === null ? {} : { bulk: { content: bulk, accountId: d.account_id } }),
        rendered,
        deliveryId: d.id
      })

    const retryOrFail = retryOrFailWithin(mta.maxAgeMs)

    /** The delivery goes back with its hold (an account's or a campaign's pause): the outcome is the hold's to write. */
    const hold = (owner: string, d: ClaimedDelivery, at: Date) => Effect.as(holdGroup(owner, d, at), Done.notWritten)

    /**
     * Decide: may the delivery be attempted at all? Decided before the content is read: reading it
     * may be what stopped the earlier attempts. Done when it fails or is held here.
     */
    const decide = (owner: string, d: ClaimedDelivery, h: Held): Effect.Effect<Done | undefined, SqlError> =>
      Effect.gen(function*() {
        const abandoned = abandonedReason(d.claims_since_outcome)
        if (abandoned !== null) return Done.of(yield* failUnread(owner, d, h, "5.3.0", abandoned))
        // Still allowed now? (suppressions, blocked domains, account and sending domain: delivery-checks.ts, read by the claim)
        const at = yield* now
        const decided = decideDelivery(d, at, config.domainGraceHours)
        if (decided._tag === "fail") return Done.of(yield* failUnread(owner, d, h, decided.status, decided.reason))
        if (decided._tag === "hold") {
          if (!isExpired(d.created_at, at, mta.maxAgeMs)) return yield* hold(owner, d, at)
          return Done.of(yield* failUnread(owner, d, h, "4.7.1", `gave up at the queue's maximum age: ${decided.reason}`))
        }
        if (d.content_bytes > maxStoredBytes) {
          const reply = `the stored message is ${d.content_bytes} bytes; at most ${maxStoredBytes} (twice MAX_JSON_MB) are read for delivery`
          return Done.of(yield* failUnread(owner, d, h, "5.3.4", reply))
        }
        return undefined
      })

    /** Load: the message with its sending domain's row, decoded (once per message). Done when either is gone or broken. */
    const load = (owner: string, d: ClaimedDelivery, h: Held): Effect.Effect<Done | Loaded, SqlError> =>
      Effect.gen(function*() {
        const m = yield* messageOf(d.message_id, h)
        const signer = m.origin === "system"
          ? { domainId: APPLIANCE_SIGNER, selector: TLSRPT_DKIM_SELECTOR }
          : m.domain_id === null || m.dkim_selector === null ? null : { domainId: m.domain_id, selector: m.dkim_selector }
        if (signer === null) return Done.of(yield* fail(owner, d, m, "5.7.0", `the sending domain ${m.from_domain} was removed`))
        // A row that does not decode fails its delivery with its origin's failure event.
        const decoded = decodedOf(h)
        if (Either.isLeft(decoded)) return Done.of(yield* fail(owner, d, m, "5.3.4", decoded.left))
        return { m, ...signer, stored: decoded.right }
      })

    /**
     * A simulator recipient: the attempt is decided here instead of by an SMTP server, and its
     * outcome written like every other (src/mta/simulator.ts); no route, no signature, no slot.
     */
    const simulate = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, renderedSubject: string | undefined) =>
      Effect.flatMap(now, (at) => {
        const outcome = simulatedOutcome(d, at)
        if (outcome._tag !== "sent" || !complainsAfter(d)) return complete(owner, d, m, outcome, at, renderedSubject)
        return Effect.uninterruptible(completeWithComplaint(queue, { owner, d, m, outcome, now: at, renderedSubject })).pipe(
          Effect.provideService(SqlClient.SqlClient, sql)
        )
      })

    /** Route: the smarthost, or the recipient domain's MX hosts and their public addresses. Done when there is nowhere to go. */
    const route = (owner: string, d: ClaimedDelivery, m: MessageForDelivery): Effect.Effect<Done | Routed, SqlError, Dns> =>
      Effect.gen(function*() {
        // The smarthost is the operator's own choice, wherever it is.
        if (Option.isSome(mta.smarthost)) return { hosts: [mta.smarthost.value.host], hops: [mta.smarthost.value], mtaSts: null }
        const found = yield* routeOf(d.recipient_domain)
        if (found._tag !== "hosts") {
          const at = yield* now
          const outcome: Outcome = found._tag === "undeliverable"
            ? { _tag: "failed", code: null, status: "5.1.2", reply: found.reason }
            : retryOrFail(d, null, "4.4.3", found.reason, at)
          return Done.of(yield* complete(owner, d, m, outcome, at))
        }
        // MTA-STS enforce (RFC 8461 §4.2): only the MX hosts the policy names, only over verified TLS.
        const policy = yield* mtaSts.policyFor(d.recipient_domain)
        const enforce = policy?.mode === "enforce"
        const hosts = enforce ? found.hosts.filter((host) => mxMatches(policy.mx, host)) : found.hosts
        if (hosts.length === 0) return Done.of(yield* unnamedMx(owner, d, m, found.hosts))
        const addresses = yield* targetsOf(hosts)
        const { allowed, refused } = publicMxOnly ? publicTargets(addresses) : { allowed: addresses, refused: [] }
        if (allowed.length === 0 && refused.length > 0) {
          // Like a null MX: a domain whose mail would go into a private network is never delivered to.
          const reply = `the MX hosts of ${d.recipient_domain} are not on public addresses (${refused.join(", ")}); refused in production`
          return Done.of(yield* fail(owner, d, m, "5.4.4", reply))
        }
        if (allowed.length === 0) {
          const at = yield* now
          return Done.of(yield* complete(owner, d, m, retryOrFail(d, null, "4.4.4", `no address for the MX hosts of ${d.recipient_domain}`, at), at))
        }
        // The extra CA (tests and staging) also lets a testing-mode session's certificate verify, for its record.
        const tls = enforce ? { requireTls: true, verifyCertificate: true, ca: mta.tlsCa } : { ca: mta.tlsCa }
        return {
          hosts,
          hops: allowed.map((t) => ({ host: t.address, servername: t.name, port: mta.mxPort, ...tls })),
          mtaSts: policy?.mode ?? null
        }
      })

    /**
     * An enforce policy that names none of the domain's MX hosts: the delivery waits (the policy or
     * the MX may be fixed) and never goes to a host the policy does not name (RFC 8461 §4.2).
     */
    const unnamedMx = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, hosts: ReadonlyArray<string>) =>
      Effect.flatMap(now, (at) => {
        const reply = `MTA-STS: no MX host of ${d.recipient_domain} (${hosts.join(", ")}) is named by its enforce policy`
        const tls = { version: null, verified: false, failure: "validation-failure", mtaSts: "enforce" } as const
        return complete(owner, d, m, { ...retryOrFail(d, null, "4.7.5", reply, at), tls }, at)
      })

    /**
     * A campaign or sequence message's render for its contact (render-at-delivery.ts), unless the
     * message is signed already; Done when it was not rendered (failed, held or deferred).
     */
    const personalize = (owner: string, d: ClaimedDelivery, h: Held, loaded: Loaded): Effect.Effect<Done | RenderedReference | undefined, SqlError> =>
      Effect.gen(function*() {
        const { m, stored } = loaded
        if ((stored._tag !== "campaign" && stored._tag !== "sequence") || h.signed !== undefined || d.account_id === null) return undefined
        const render = yield* rendering.render(stored, d.account_id)
        if (render._tag === "rendered") return render.rendered
        const at = yield* now
        if (render._tag === "fail") return Done.of(yield* fail(owner, d, m, "5.6.0", render.reason))
        if (render._tag === "hold") return yield* hold(owner, d, at)
        const outcome: Outcome = render.until === undefined || isExpired(d.created_at, at, mta.maxAgeMs)
          ? retryOrFail(d, null, "4.3.0", render.reason, at)
          : { _tag: "deferred", code: null, status: "4.3.0", reply: render.reason, retryAt: render.until }
        return Done.of(yield* complete(owner, d, m, outcome, at))
      })

    /**
     * Compose and sign: the message's MIME (rendered first when it is a reference), DKIM-signed once
     * per message; with the rendered subject, which the outcome records (unknown when the message
     * was signed by an earlier attempt: the outcome then keeps the one recorded then).
     */
    const composeAndSign = (owner: string, d: ClaimedDelivery, h: Held, loaded: Loaded, key: SigningKey): Effect.Effect<Done | Composed, SqlError> =>
      Effect.gen(function*() {
        const rendered = yield* personalize(owner, d, h, loaded)
        if (rendered instanceof Done) return rendered
        const signed = yield* Effect.either(signedOf(h, key, composeFor(d, loaded, rendered)))
        if (Either.isLeft(signed)) return Done.of(yield* fail(owner, d, loaded.m, "5.6.0", signed.left.reason))
        return { raw: signed.right, subject: rendered?.subject }
      })

    /**
     * Send: one SMTP transaction under the destination's limits. Done (nothing written) when the
     * destination would not take it now and the delivery went back to the queue.
     */
    const send = (owner: string, d: ClaimedDelivery, m: LoadedMessage, routed: Routed, raw: Buffer, leftDestination: LeftDestination, recorded: Promise<void>) =>
      Effect.gen(function*() {
        const returnPath = m.return_path_verified_at === null ? config.bounceDomain : returnPathDomain(m.from_domain)
        const slotted = yield* destinations.run(d.recipient_domain, routed.hosts, d.channel, (shaping) =>
          Effect.promise(() =>
            smtp.send(routed.hops, { from: encodeVerp(d.id, returnPath, verpSecret), to: d.recipient }, raw, {
              heloName: config.hostname,
              maxConnections: shaping.maxConnections,
              messagesPerConnection: shaping.messagesPerConnection,
              urgent: d.channel === "transactional",
              recorded
            })
          ), recorded)
        // Not now (the destination is paused, or its connections are held by another replica).
        if (Option.isNone(slotted)) {
          yield* queue.release(owner, [d.id], yield* now)
          yield* leftDestination(true)
          return Done.notWritten
        }
        yield* leftDestination(false)
        return slotted.value
      })

    /** Classify: the outcome the destination's reply makes (a throttling reply slows the destination down), and its time. */
    const classify = (d: ClaimedDelivery, reply: SentReply, mtaStsMode: Routed["mtaSts"]) =>
      Effect.gen(function*() {
        const c = classifyReply(reply)
        recordSmtpReply(reply.code)
        if (c.throttle) yield* destinations.throttle(d.recipient_domain)
        const at = yield* now
        const text = reply.text.trim()
        // The host whose reply decided (recorded with the attempt); empty when there was no hop at all.
        const host = reply.host === "" ? undefined : reply.host
        const tls = reply.tls === undefined ? undefined : { ...reply.tls, mtaSts: mtaStsMode }
        const outcome: Outcome = c.outcome === "sent"
          ? { _tag: "sent", code: reply.code ?? 250, status: c.status, reply: text, host, tls }
          : c.outcome === "bounced"
          ? { _tag: "bounced", code: reply.code, status: c.status, category: c.category, reply: text, suppress: c.suppress, host, tls }
          : { ...retryOrFail(d, reply.code, c.status, text, at), host, tls }
        return { outcome, at }
      })

    /** Record: the outcome written with its event; a bounce then has the account's reputation looked at. */
    const record = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, outcome: Outcome, at: Date, renderedSubject: string | undefined) =>
      Effect.gen(function*() {
        const written = yield* complete(owner, d, m, outcome, at, renderedSubject)
        // System mail (no account) has no reputation to look at.
        if (written && outcome._tag === "bounced" && d.account_id !== null) yield* reputation.evaluate(d.account_id, at)
        return written
      })

    /**
     * One attempt for one claimed delivery, in its steps: decide → load → route → compose and
     * sign → send → classify → record (each step writes the outcome itself when the attempt ends
     * there: Done). Always ends with the outcome written. `leftDestination` runs once the attempt
     * is done with the destination's connection, before the outcome is written (the connection
     * waits for it: withOutcomeGate); `refused` when the destination would not take it now (paused,
     * or its connections held by other replicas) and the delivery went back to the queue.
     */
    const attempt = (owner: string, d: ClaimedDelivery, leftDestination: LeftDestination = () => Effect.void) =>
      withOutcomeGate((recorded) => holding(d.message_id, (h) =>
        Effect.gen(function*() {
          const decided = yield* decide(owner, d, h)
          if (decided !== undefined) return decided.written
          const loaded = yield* load(owner, d, h)
          if (loaded instanceof Done) return loaded.written
          if (isSimulatorAddress(d.recipient)) {
            // Rendered as a real recipient's would be, so a trial shows the subject (and any render failure) as sent.
            const rendered = yield* personalize(owner, d, h, loaded)
            if (rendered instanceof Done) return rendered.written
            return yield* simulate(owner, d, loaded.m, rendered?.subject)
          }
          // The signing key before the route, so a domain without one is the same defect whatever its route.
          const key = yield* keyOf(loaded.domainId, loaded.selector, loaded.m.from_domain)
          const routed = yield* route(owner, d, loaded.m)
          if (routed instanceof Done) return routed.written
          const composed = yield* composeAndSign(owner, d, h, loaded, key)
          if (composed instanceof Done) return composed.written
          const reply = yield* send(owner, d, loaded.m, routed, composed.raw, leftDestination, recorded)
          if (reply instanceof Done) return reply.written
          const { outcome, at } = yield* classify(d, reply, routed.mtaSts)
          return yield* record(owner, d, loaded.m, outcome, at, composed.subject)
        })))

    return { attempt } as const
  })
}) {}
