/**
 * One delivery attempt, as a short story: the message (composed and DKIM-signed once per message),
 * the route (MX hosts, or the smarthost), the VERP return path, the SMTP transaction under the
 * destination's limits, the classification of the reply, and the outcome written with its event.
 *
 * The MTA does not trust what the sending API accepted: rows of older versions, or rows written
 * some other way, reach it too. A delivery claimed again and again without an outcome, a stored
 * message too large to read, one that does not decode (src/mta/queue/StoredMessage.ts), one too
 * many-parted to compose, or one whose composing fails: each fails its delivery with its origin's
 * failure event — never the process, which every other delivery depends on.
 *
 * The database work of an attempt is two statements shared with every attempt running at the
 * same time (group commit, src/lib/group-commit.ts): one reads the messages with their sending
 * domain's row, one writes the outcomes with their events. Measured on bench/outbound.ts, one
 * attempt used to cost six round trips (the message, the domain row, then BEGIN, UPDATE, INSERT
 * event, COMMIT), and the round trips were most of the MTA's main-thread time.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Data, Effect, Either, Option } from "effect"
import { AppConfig } from "../config/app-config.ts"
import type { Dns } from "../lib/dns.ts"
import { returnPathDomain } from "../platform/domains/records.ts"
import { Reputation } from "../platform/reputation/Reputation.ts"
import { makeGroupCommit } from "../lib/group-commit.ts"
import { isSimulatorAddress } from "../lib/simulator.ts"
import { PublicTokens } from "../bulk/public/tokens.ts"
import { RenderEngine } from "../bulk/render/RenderEngine.ts"
import type { RenderedContent } from "../bulk/render/content.ts"
import { type BulkRendering, composeStored } from "./compose/compose.ts"
import { classifyReply } from "./classify.ts"
import { prepareKey, signMessage, type SigningKey } from "./dkim.ts"
import { Destinations } from "./Destinations.ts"
import { MtaConfig } from "./MtaConfig.ts"
import { makeLookupCache } from "./lookup-cache.ts"
import { publicTargets, resolveRoute, resolveTargets, type Route, type Target } from "./mx.ts"
import { makeRenderAtDelivery, type RenderAtDelivery } from "./compose/render-at-delivery.ts"
import {
  type ClaimedDelivery,
  type Completion,
  DeliveryQueue,
  type LoadedMessage,
  type MessageForDelivery,
  type Outcome
} from "./queue/DeliveryQueue.ts"
import { decideDelivery, HOLD_RECHECK_MS } from "./queue/delivery-checks.ts"
import { decodeStoredMessage, type StoredMessage } from "./queue/StoredMessage.ts"
import { abandonedReason, isExpired, retryDelayMs } from "./retry-schedule.ts"
import { complainsAfter, completeWithComplaint, simulatedOutcome } from "./simulator.ts"
import { SmtpClient } from "./smtp-client.ts"
import { encodeVerp } from "./verp.ts"
import { VerpSecret } from "./VerpSecret.ts"

/** Lookups of one delivery group's messages share a statement up to this many (bounded by the claim anyway). */
const LOAD_GROUP = 200
/** Outcomes written in one statement, at most (a parameter list and a JSON document per group). */
const WRITE_GROUP = 500
/**
 * How long an MX route and its hosts' addresses are used. Node's resolver does not report the
 * TTL of MX answers; 30 s is below what most domains publish (300 s to hours) and
 * turns a lookup per delivery into one per domain per 30 s. Failed lookups are not kept.
 */
const ROUTE_TTL_MS = 30_000
const ROUTES_KEPT = 10_000

/** The message cannot be made into MIME: the same every time, so its delivery fails. */
class Uncomposable extends Data.TaggedError("Uncomposable")<{ readonly reason: string }> {}

/** A message in the hands of `refs` attempts, read (its stored parts), decoded, composed and signed once for all of them. */
interface Held {
  refs: number
  /** The stored message's parts as read (see MessageForDelivery); undefined until read. */
  parts: { readonly content: unknown; readonly shared: unknown } | undefined
  /** The decoded message, or why it cannot be delivered (decodeStoredMessage); undefined until decoded. */
  decoded: Either.Either<StoredMessage, string> | undefined
  signed: { readonly key: SigningKey; readonly raw: Promise<Buffer | Uncomposable> } | undefined
}

export class Delivery extends Effect.Service<Delivery>()("herald/Delivery", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const mta = yield* MtaConfig
    const queue = yield* DeliveryQueue
    const destinations = yield* Destinations
    const reputation = yield* Reputation
    const sql = yield* SqlClient.SqlClient
    // Campaign and sequence messages are rendered per contact, in a render worker, before they are composed.
    const rendering = makeRenderAtDelivery(yield* RenderEngine, sql)
    const tokens = yield* PublicTokens
    const bulkFor = (accountId: string): BulkRendering => ({ tokens, baseUrl: config.baseUrl, bounceDomain: config.bounceDomain, accountId })
    const smtp = new SmtpClient()
    yield* Effect.addFinalizer(() => Effect.sync(() => smtp.close()))

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

    // Parsed keys are small (a KeyObject each): a thousand of them is a few MB. Parsing a PEM costs
    // more than signing, so concurrent misses share one read and one parse.
    const keys = makeLookupCache<SigningKey, SqlError>({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: 1_000, keep: () => true })
    const routes = makeLookupCache<Route, never>({ ttlMs: ROUTE_TTL_MS, maxEntries: ROUTES_KEPT, keep: (r) => r._tag === "hosts" })
    const targets = makeLookupCache<ReadonlyArray<Target>, never>({ ttlMs: ROUTE_TTL_MS, maxEntries: ROUTES_KEPT, keep: (t) => t.length > 0 })

    // Concurrent attempts read their messages (with the sending domain's row, at every attempt)
    // and write their outcomes (with their events) a group per statement.
    const loads = yield* makeGroupCommit({
      write: (items: ReadonlyArray<{ readonly id: string; readonly content: boolean }>) =>
        Effect.map(queue.load([...new Set(items.map((i) => i.id))], items.filter((i) => i.content).map((i) => i.id)), (rows) => {
          const byId = new Map(rows.map((r) => [r.id, r]))
          return items.map((i): LoadedMessage | undefined => byId.get(i.id))
        }),
      maxItems: LOAD_GROUP
    })
    const outcomes = yield* makeGroupCommit({
      write: (items: ReadonlyArray<Completion>) => queue.completeMany(items),
      maxItems: WRITE_GROUP
    })
    // Deliveries held by their account's pause go back a group per statement too: a paused
    // account's whole backlog falls due again at once at each recheck.
    const holds = yield* makeGroupCommit({
      write: (items: ReadonlyArray<{ readonly owner: string; readonly id: string; readonly at: Date }>) => {
        const at = new Date(Math.max(...items.map((i) => i.at.getTime())))
        return queue.hold([...new Set(items.map((i) => i.owner))], items.map((i) => i.id), at, new Date(at.getTime() + HOLD_RECHECK_MS))
      },
      maxItems: WRITE_GROUP
    })

    /**
     * The messages of the attempts in hand, by id: the recipients of one message, claimed together,
     * share one compose and one signature, made before the attempt waits for a connection (so the
     * connection never waits for the signer) and let go when the last of them is done. Memory
     * follows the attempts running (at most twice a site's connections per domain, see Mta.ts),
     * not the claim or the queue.
     */
    const held = new Map<string, Held>()
    const holding = <A, E, R>(messageId: string, use: (h: Held) => Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          let h = held.get(messageId)
          if (h === undefined) {
            h = { refs: 0, parts: undefined, decoded: undefined, signed: undefined }
            held.set(messageId, h)
          }
          h.refs += 1
          return h
        }),
        use,
        (h) =>
          Effect.sync(() => {
            h.refs -= 1
            if (h.refs === 0 && held.get(messageId) === h) held.delete(messageId)
          })
      )
    /** The held message decoded, or why it cannot be delivered: once per message (see decodeStoredMessage). */
    const decodedOf = (h: Held) => {
      if (h.decoded === undefined) h.decoded = decodeStoredMessage(h.parts?.content, h.parts?.shared)
      return h.decoded
    }
    /** The signed message; a composing error (thrown or rejected) is the message's own and fails with Uncomposable. */
    const signedOf = (
      h: Held,
      stored: StoredMessage,
      m: MessageForDelivery,
      key: SigningKey,
      d: ClaimedDelivery,
      rendered: RenderedContent | undefined
    ): Effect.Effect<Buffer, Uncomposable> =>
      Effect.suspend(() => {
        if (h.signed === undefined || h.signed.key !== key) {
          const composed = Promise.resolve()
            .then(() => composeStored(stored, {
              messageId: m.id,
              sendingDomain: m.from_domain,
              date: m.created_at,
              bulk: bulkFor(d.account_id),
              rendered,
              // A campaign message's tracking tokens name its (only) delivery; other messages ignore it.
              deliveryId: d.id
            }))
            .then(
              (raw) => signMessage(raw, key),
              (error: unknown) =>
                new Uncomposable({ reason: `the message could not be composed: ${error instanceof Error ? error.message : String(error)}` })
            )
          h.signed = { key, raw: composed }
        }
        const signed = h.signed.raw
        return Effect.flatMap(Effect.promise(() => signed), (raw) => (raw instanceof Uncomposable ? Effect.fail(raw) : Effect.succeed(raw)))
      })

    const keyOf = (domainId: string, selector: string, domain: string) =>
      keys.get(
        `${domainId}/${selector}`,
        Effect.flatMap(queue.dkimKey(domainId), (pem) =>
          pem === undefined
            ? Effect.die(new Error(`the domain ${domain} has no DKIM key`))
            : Effect.sync(() => prepareKey(domain, selector, pem)))
      )

    const routeOf = (domain: string) => routes.get(domain, resolveRoute(domain))
    const targetsOf = (hosts: ReadonlyArray<string>) => targets.get(hosts.join(" "), resolveTargets(hosts))

    /** The message with its domain's row as it is now; its stored parts (unless `withContent` is false) kept from the first attempt that read them. */
    const messageOf = (id: string, h: Held, withContent = true) =>
      Effect.suspend(() => {
        const reading = withContent && h.parts === undefined
        return Effect.flatMap(loads.submit({ id, content: reading }), (row): Effect.Effect<LoadedMessage> => {
          if (row === undefined) return Effect.die(new Error(`delivery without message ${id}`))
          if (reading && h.parts === undefined) h.parts = { content: row.content, shared: row.shared }
          return Effect.succeed(row)
        })
      })

    /**
     * Hands an outcome to the group writer and waits until it is on record. Uninterruptible: at
     * shutdown an attempt whose SMTP transaction is over still records it (before the actor gives
     * back its leases), rather than leaving a sent message to be sent again.
     */
    const complete = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, outcome: Outcome, now: Date) =>
      Effect.uninterruptible(outcomes.submit({ owner, d, m, outcome, now }))

    const retryOrFail = (d: ClaimedDelivery, code: number | null, status: string, reply: string, now: Date): Outcome =>
      isExpired(d.created_at, now, mta.maxAgeMs)
        ? { _tag: "failed", code, status, reply: `gave up after ${d.attempts + 1} attempts: ${reply}` }
        : { _tag: "deferred", code, status, reply, retryAt: new Date(now.getTime() + retryDelayMs(d.attempts + 1)) }

    /**
     * One attempt for one claimed delivery; always ends with the outcome written. `leftDestination`
     * runs once the attempt is done with the destination's connection (its SMTP transaction is
     * over), before the outcome is written; `refused` when the destination would not take it now
     * (paused, or its connections held by other replicas) and the delivery went back to the queue.
     */
    const attempt = (owner: string, d: ClaimedDelivery, leftDestination: (refused: boolean) => Effect.Effect<void, never, Dns> = () => Effect.void) =>
      holding(d.message_id, (h) => Effect.gen(function*() {
        const now = () => Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
        const fail = (m: MessageForDelivery, status: string, reply: string) =>
          Effect.flatMap(now(), (at) => complete(owner, d, m, { _tag: "failed", code: null, status, reply }, at))
        // Decided before the content is read: reading it may be what stopped the earlier attempts.
        const abandoned = abandonedReason(d.claims_since_outcome)
        if (abandoned !== null) return yield* fail(yield* messageOf(d.message_id, h, false), "5.3.0", abandoned)
        // Still allowed now? (suppressions, blocked domains, account and sending domain: delivery-checks.ts, read by the claim)
        const decided = decideDelivery(d, yield* now(), config.domainGraceHours)
        if (decided._tag === "fail") return yield* fail(yield* messageOf(d.message_id, h, false), decided.status, decided.reason)
        if (decided._tag === "hold") {
          const at = yield* now()
          if (isExpired(d.created_at, at, mta.maxAgeMs)) {
            return yield* fail(yield* messageOf(d.message_id, h, false), "4.7.1", `gave up at the queue's maximum age: ${decided.reason}`)
          }
          yield* Effect.uninterruptible(holds.submit({ owner, id: d.id, at }))
          return false
        }
        if (d.content_bytes > maxStoredBytes) {
          return yield* fail(
            yield* messageOf(d.message_id, h, false),
            "5.3.4",
            `the stored message is ${d.content_bytes} bytes; at most ${maxStoredBytes} (twice MAX_JSON_MB) are read for delivery`
          )
        }
        const m = yield* messageOf(d.message_id, h)
        if (m.domain_id === null || m.dkim_selector === null) return yield* fail(m, "5.7.0", `the sending domain ${m.from_domain} was removed`)
        // A row that does not decode fails its delivery with its origin's failure event.
        const decoded = decodedOf(h)
        if (Either.isLeft(decoded)) return yield* fail(m, "5.3.4", decoded.left)
        // A simulator recipient: the attempt is decided here instead of by an SMTP server, and its
        // outcome written like every other (src/mta/simulator.ts); no route, no signature, no slot.
        if (isSimulatorAddress(d.recipient)) {
          const at = yield* now()
          const outcome = simulatedOutcome(d, at)
          if (outcome._tag !== "sent" || !complainsAfter(d)) return yield* complete(owner, d, m, outcome, at)
          return yield* Effect.uninterruptible(completeWithComplaint(queue, { owner, d, m, outcome, now: at })).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
        }
        const key = yield* keyOf(m.domain_id, m.dkim_selector, m.from_domain)
        const returnPath = m.return_path_verified_at === null ? config.bounceDomain : returnPathDomain(m.from_domain)
        const route = Option.isSome(mta.smarthost)
          ? { _tag: "hosts" as const, hosts: [mta.smarthost.value.host] }
          : yield* routeOf(d.recipient_domain)
        if (route._tag !== "hosts") {
          const at = yield* now()
          const outcome: Outcome = route._tag === "undeliverable"
            ? { _tag: "failed", code: null, status: "5.1.2", reply: route.reason }
            : retryOrFail(d, null, "4.4.3", route.reason, at)
          return yield* complete(owner, d, m, outcome, at)
        }
        // The smarthost is the operator's own choice, wherever it is.
        const found = Option.isSome(mta.smarthost) ? [] : yield* targetsOf(route.hosts)
        const { allowed, refused } = publicMxOnly ? publicTargets(found) : { allowed: found, refused: [] }
        const hops = Option.isSome(mta.smarthost)
          ? [mta.smarthost.value]
          : allowed.map((t) => ({ host: t.address, servername: t.name, port: mta.mxPort }))
        if (hops.length === 0 && refused.length > 0) {
          // Like a null MX: a domain whose mail would go into a private network is never delivered to.
          return yield* fail(m, "5.4.4", `the MX hosts of ${d.recipient_domain} are not on public addresses (${refused.join(", ")}); refused in production`)
        }
        if (hops.length === 0) {
          const at = yield* now()
          return yield* complete(owner, d, m, retryOrFail(d, null, "4.4.4", `no address for the MX hosts of ${d.recipient_domain}`, at), at)
        }
        // A campaign or sequence message: its contact's render, in a render worker (render-at-delivery.ts).
        const stored = decoded.right
        const render: RenderAtDelivery | undefined = (stored._tag === "campaign" || stored._tag === "sequence") && h.signed === undefined
          ? yield* rendering.render(stored, bulkFor(d.account_id))
          : undefined
        if (render !== undefined && render._tag !== "rendered") {
          const at = yield* now()
          if (render._tag === "fail") return yield* fail(m, "5.6.0", render.reason)
          if (render._tag === "hold") {
            yield* Effect.uninterruptible(holds.submit({ owner, id: d.id, at }))
            return false
          }
          const outcome = render.until === undefined
            ? retryOrFail(d, null, "4.3.0", render.reason, at)
            : { _tag: "deferred" as const, code: null, status: "4.3.0", reply: render.reason, retryAt: render.until }
          return yield* complete(owner, d, m, isExpired(d.created_at, at, mta.maxAgeMs) ? retryOrFail(d, null, "4.3.0", render.reason, at) : outcome, at)
        }
        const signed = yield* Effect.either(signedOf(h, stored, m, key, d, render?.rendered))
        if (Either.isLeft(signed)) return yield* fail(m, "5.6.0", signed.left.reason)
        const raw = signed.right
        const slotted = yield* destinations.run(d.recipient_domain, route.hosts, d.channel, (shaping) =>
          Effect.promise(() =>
            smtp.send(hops, { from: encodeVerp(d.id, returnPath, verpSecret), to: d.recipient }, raw, {
              heloName: config.hostname,
              maxConnections: shaping.maxConnections,
              messagesPerConnection: shaping.messagesPerConnection,
              urgent: d.channel === "transactional"
            })
          ))
        // Not now (the destination is paused, or its connections are held by another replica).
        if (Option.isNone(slotted)) {
          yield* queue.release(owner, [d.id], yield* now())
          yield* leftDestination(true)
          return false
        }
        yield* leftDestination(false)
        const reply = slotted.value
        const c = classifyReply(reply)
        if (c.throttle) yield* destinations.throttle(d.recipient_domain)
        const at = yield* now()
        const text = reply.text.trim()
        // The host whose reply decided (recorded with the attempt); empty when there was no hop at all.
        const host = reply.host === "" ? undefined : reply.host
        const outcome: Outcome = c.outcome === "sent"
          ? { _tag: "sent", code: reply.code ?? 250, status: c.status, reply: text, host }
          : c.outcome === "bounced"
          ? { _tag: "bounced", code: reply.code, status: c.status, category: c.category, reply: text, suppress: c.suppress, host }
          : { ...retryOrFail(d, reply.code, c.status, text, at), host }
        const written = yield* complete(owner, d, m, outcome, at)
        if (written && outcome._tag === "bounced") yield* reputation.evaluate(d.account_id, at)
        return written
      }))

    return { attempt } as const
  })
}) {}
