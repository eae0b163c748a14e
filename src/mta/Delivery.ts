/**
 * One delivery attempt, as a short story: the message (composed and DKIM-signed once per message),
 * the route (MX hosts, or the smarthost), the VERP return path, the SMTP transaction under the
 * destination's limits, the classification of the reply, and the outcome written with its event.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { returnPathDomain } from "../platform/domains/records.ts"
import { Reputation } from "../platform/reputation/Reputation.ts"
import { composeMessage } from "../transactional/compose.ts"
import type { FullRequest } from "../transactional/request.ts"
import { classifyReply } from "./classify.ts"
import { prepareKey, signMessage, type SigningKey } from "./dkim.ts"
import { Destinations } from "./Destinations.ts"
import { MtaConfig } from "./MtaConfig.ts"
import { resolveRoute, resolveTargets } from "./mx.ts"
import { type ClaimedDelivery, DeliveryQueue, type MessageForDelivery, type Outcome } from "./queue/DeliveryQueue.ts"
import { isExpired, retryDelayMs } from "./retry-schedule.ts"
import { SmtpClient } from "./smtp-client.ts"
import { encodeVerp } from "./verp.ts"
import { VerpSecret } from "./VerpSecret.ts"

/**
 * A cache bounded by the bytes it holds, not by its count: one cached message can weigh 5 KB or
 * 20 MB (base64 attachments), so a count bound says nothing about memory. Least recently used
 * entries go first; an entry larger than the whole budget is not kept at all.
 */
export class ByteBoundedCache<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly bytes: number }>()
  private total = 0
  constructor(private readonly maxBytes: number, private readonly sizeOf: (value: V) => number) {}

  get size(): number {
    return this.entries.size
  }
  get bytes(): number {
    return this.total
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    // Map order is insertion order: re-inserting marks the entry as the most recently used.
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  set(key: string, value: V): void {
    this.delete(key)
    const bytes = this.sizeOf(value)
    if (bytes > this.maxBytes) return
    while (this.total + bytes > this.maxBytes) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.delete(oldest.value)
    }
    this.entries.set(key, { value, bytes })
    this.total += bytes
  }

  delete(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.total -= entry.bytes
  }
}

/** An estimate of a JSON value's weight in memory: its strings (2 bytes a code unit, at worst) dominate. */
const weightOf = (value: unknown): number => {
  if (typeof value === "string") return 2 * value.length + 16
  if (Array.isArray(value)) return value.reduce((sum: number, v: unknown) => sum + weightOf(v), 16)
  if (typeof value === "object" && value !== null) {
    let sum = 16
    for (const [k, v] of Object.entries(value)) sum += 2 * k.length + weightOf(v)
    return sum
  }
  return 8
}

/**
 * Byte budgets of the delivery caches. They exist so that a message's recipients (one delivery row
 * each, often claimed together) compose and sign it once; a miss only costs a re-read and a
 * re-sign. 64 MB of stored requests and 32 MB of signed messages hold thousands of ordinary 5 KB
 * messages yet stay a small part of the 400 MB the appliance may use, however large the
 * attachments (up to 20 MB each) and however long the queue.
 */
const MESSAGE_CACHE_BYTES = 64 * 1024 * 1024
const SIGNED_CACHE_BYTES = 32 * 1024 * 1024

interface Sender {
  readonly key: SigningKey
  readonly returnPath: string
}

export class Delivery extends Effect.Service<Delivery>()("herald/Delivery", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const mta = yield* MtaConfig
    const queue = yield* DeliveryQueue
    const destinations = yield* Destinations
    const reputation = yield* Reputation
    const smtp = new SmtpClient()
    yield* Effect.addFinalizer(() => Effect.sync(() => smtp.close()))

    const verpSecret = (yield* VerpSecret).value

    // Parsed keys are small (a KeyObject each): a thousand of them is a few MB.
    const keys = new ByteBoundedCache<SigningKey>(1_000, () => 1)
    const signed = new ByteBoundedCache<Buffer>(SIGNED_CACHE_BYTES, (b) => b.length)
    const messages = new ByteBoundedCache<MessageForDelivery>(MESSAGE_CACHE_BYTES, (m) => weightOf(m.content) + 256)
    const signing = new Map<string, Promise<Buffer>>()

    /**
     * The domain row is read at every attempt (one primary-key lookup): its return path follows the
     * re-check (MX published or removed) and a removed domain stops at once. Only the parsed DKIM
     * key, the costly part, is cached, under its selector (a new key gets a new selector).
     */
    const senderOf = (accountId: string, domain: string) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ id: string; dkim_selector: string; return_path_verified_at: Date | null }>`
          SELECT id, dkim_selector, return_path_verified_at FROM domains
          WHERE account_id = ${accountId} AND domain = ${domain}`
        if (row === undefined) return Option.none<Sender>()
        const cacheKey = `${row.id}/${row.dkim_selector}`
        let key = keys.get(cacheKey)
        if (key === undefined) {
          const [secret] = yield* sql<{ dkim_private_key: string }>`SELECT dkim_private_key FROM domains WHERE id = ${row.id}`
          key = prepareKey(domain, row.dkim_selector, secret!.dkim_private_key)
          keys.set(cacheKey, key)
        }
        return Option.some<Sender>({
          key,
          returnPath: row.return_path_verified_at === null ? config.bounceDomain : returnPathDomain(domain)
        })
      })

    const messageOf = (id: string) =>
      Effect.gen(function*() {
        const cached = messages.get(id)
        if (cached !== undefined) return cached
        const [row] = yield* queue.messages([id])
        if (row === undefined) return yield* Effect.die(new Error(`delivery without message ${id}`))
        messages.set(id, row)
        return row
      })

    const signedRaw = (m: MessageForDelivery, key: SigningKey) =>
      Effect.gen(function*() {
        const cached = signed.get(m.id)
        if (cached !== undefined) return cached
        // The recipients of one message, claimed together, share one compose and one signature.
        let pending = signing.get(m.id)
        if (pending === undefined) {
          pending = composeMessage(m.content as FullRequest, 0, { messageId: m.id, sendingDomain: m.from_domain, date: m.created_at })
            .then((raw) => signMessage(raw, key))
            .then((result) => {
              signed.set(m.id, result)
              return result
            })
            .finally(() => signing.delete(m.id))
          signing.set(m.id, pending)
        }
        const ready = pending
        return yield* Effect.promise(() => ready)
      })

    const retryOrFail = (d: ClaimedDelivery, code: number | null, status: string, reply: string, now: Date): Outcome =>
      isExpired(d.created_at, now, mta.maxAgeMs)
        ? { _tag: "failed", code, status, reply: `gave up after ${d.attempts + 1} attempts: ${reply}` }
        : { _tag: "deferred", code, status, reply, retryAt: new Date(now.getTime() + retryDelayMs(d.attempts + 1)) }

    /** One attempt for one claimed delivery; always ends with the outcome written. */
    const attempt = (owner: string, d: ClaimedDelivery) =>
      Effect.gen(function*() {
        const m = yield* messageOf(d.message_id)
        const sender = yield* senderOf(d.account_id, m.from_domain)
        const now = () => Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
        if (Option.isNone(sender)) {
          return yield* queue.complete(owner, d, m, {
            _tag: "failed", code: null, status: "5.7.0", reply: `the sending domain ${m.from_domain} was removed`
          }, yield* now())
        }
        const raw = yield* signedRaw(m, sender.value.key)
        const route = Option.isSome(mta.smarthost)
          ? { _tag: "hosts" as const, hosts: [mta.smarthost.value.host] }
          : yield* resolveRoute(d.recipient_domain)
        if (route._tag !== "hosts") {
          const at = yield* now()
          const outcome: Outcome = route._tag === "undeliverable"
            ? { _tag: "failed", code: null, status: "5.1.2", reply: route.reason }
            : retryOrFail(d, null, "4.4.3", route.reason, at)
          return yield* queue.complete(owner, d, m, outcome, at)
        }
        const hops = Option.isSome(mta.smarthost)
          ? [mta.smarthost.value]
          : (yield* resolveTargets(route.hosts)).map((t) => ({ host: t.address, servername: t.name, port: mta.mxPort }))
        if (hops.length === 0) {
          const at = yield* now()
          return yield* queue.complete(owner, d, m, retryOrFail(d, null, "4.4.4", `no address for the MX hosts of ${d.recipient_domain}`, at), at)
        }
        const slotted = yield* destinations.run(d.recipient_domain, route.hosts, (shaping) =>
          Effect.promise(() =>
            smtp.send(hops, { from: encodeVerp(d.id, sender.value.returnPath, verpSecret), to: d.recipient }, raw, {
              heloName: config.hostname,
              maxConnections: shaping.maxConnections,
              messagesPerConnection: shaping.messagesPerConnection
            })
          ))
        // Not now (the destination is paused, or its connections are held by another replica).
        if (Option.isNone(slotted)) return yield* queue.release(owner, [d.id], yield* now()).pipe(Effect.as(false))
        const reply = slotted.value
        const c = classifyReply(reply)
        if (c.throttle) yield* destinations.throttle(d.recipient_domain)
        const at = yield* now()
        const text = reply.text.trim()
        const outcome: Outcome = c.outcome === "sent"
          ? { _tag: "sent", code: reply.code ?? 250, status: c.status, reply: text }
          : c.outcome === "bounced"
          ? { _tag: "bounced", code: reply.code, status: c.status, category: c.category, reply: text, suppress: c.suppress }
          : retryOrFail(d, reply.code, c.status, text, at)
        const written = yield* queue.complete(owner, d, m, outcome, at)
        if (written && outcome._tag === "bounced") yield* reputation.evaluate(d.account_id, at)
        return written
      })

    return { attempt } as const
  })
}) {}
