/**
 * Accepting a send, as a short story of named steps: check the account and the sender domain,
 * plan the items (suppressions, block list, de-duplication), stop here in sandbox mode, honour
 * the Idempotency-Key, reserve the quota (a short transaction of its own, see Quota.ts), then
 * commit the queue rows (or the scheduled send) and the idempotency record in one transaction;
 * if that fails, the reservation is released. The 202 is answered only after that commit, and
 * the idempotency record holds exactly that 202's body.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Option } from "effect"
import { domainOf } from "../lib/email.ts"
import { newId } from "../lib/ids.ts"
import type { SendOutcome } from "../lib/metrics.ts"
import { allSimulatorAddresses, quotaCountOf } from "../lib/simulator.ts"
import { Domains } from "../platform/domains/Domains.ts"
import { Suppressions } from "../platform/suppressions/Suppressions.ts"
import type { Limits } from "../platform/usage/AccountLimits.ts"
import { releaseQuota } from "../platform/usage/Quota.ts"
import { QuotaReserver } from "../platform/usage/QuotaReserver.ts"
import { QueueSignal } from "../db/QueueSignal.ts"
import { type StoredMessage, structuredMessages } from "../mta/queue/StoredMessage.ts"
import { hashBody, Idempotency } from "./Idempotency.ts"
import { planItems, type Recipient } from "./plan-items.ts"
import { type QueuedMessage, QueueWriter, writeQueue } from "../mta/queue/enqueue.ts"
import { schedule } from "./scheduled/schedule.ts"
import type { Personalization } from "../mta/queue/parts.ts"
import type { FullRequest } from "./request.ts"
import type { SenderFacts } from "./send-context.ts"
import type { SendItem, SendResponse } from "./send/Api.ts"

/** The canonical send request (the full form, whatever form the client used: normalize.ts). */
export type CanonicalRequest = FullRequest

/** A send, whichever entry took it (the API's JSON, SMTP submission's MIME): who, when, and how it is keyed. */
export interface SendBase {
  readonly accountId: string
  readonly keyId: string
  readonly requestId: string
  readonly now: Date
  readonly sandbox: boolean
  /** What the Idempotency-Key compares: the API's exact body; a submission's envelope and message. */
  readonly rawBody: string
  readonly idempotencyKey: Option.Option<string>
  readonly maxRecipients: number
  /** The flat form's 202 adds a top-level `message_id` (its one item's). */
  readonly form?: "full" | "flat" | undefined
}

export interface AcceptInput extends SendBase {
  readonly request: CanonicalRequest
}

/**
 * What acceptance needs of the mail itself: its sender, each message's recipients (a
 * personalization each; one message for a submission), and each message's subject and stored
 * form. The API's request becomes this in `mailOfRequest`; a submission in submission/message.ts.
 */
export interface MailToAccept {
  readonly fromEmail: string
  readonly personalizations: ReadonlyArray<ReadonlyArray<Recipient>>
  readonly messageOf: (index: number) => { readonly subject: string; readonly stored: StoredMessage }
  /** The API's send_at: one scheduled send (its request, released later) instead of queue rows. */
  readonly scheduled?: { readonly sendAt: string; readonly request: CanonicalRequest } | undefined
}

export interface MailInput extends SendBase {
  readonly mail: MailToAccept
}

export class AccountSuspended extends Data.TaggedError("AccountSuspended")<{}> {}
export class SendingPaused extends Data.TaggedError("SendingPaused")<{ readonly reason: string }> {}
export class SenderDomainNotAuthorized extends Data.TaggedError("SenderDomainNotAuthorized")<{
  readonly domain: string
  readonly state: "not_registered" | "unverified" | "grace_expired"
}> {}
/** A twin request with the same Idempotency-Key committed while this one was running. */
class IdempotencyRace extends Data.TaggedError("IdempotencyRace")<{ readonly keyed: { readonly key: string; readonly hash: Buffer } }> {}
export class IdempotencyConflict extends Data.TaggedError("IdempotencyConflict")<{ readonly key: string }> {}
/** A stored response for this Idempotency-Key and body: answer it again, send nothing. */
export class IdempotentReplay extends Data.TaggedError("IdempotentReplay")<{
  readonly status: number
  readonly response: unknown
}> {}

/** Every recipient address of the request, lower case, each once. */
export const recipientAddresses = (request: CanonicalRequest): ReadonlyArray<string> => [
  ...new Set(request.personalizations.flatMap(recipientsOf).map((r) => r.email.toLowerCase()))
]

export const recipientsOf = (p: Personalization): ReadonlyArray<Recipient> => [
  ...p.to.map((a) => ({ ...a, kind: "to" as const })),
  ...(p.cc ?? []).map((a) => ({ ...a, kind: "cc" as const })),
  ...(p.bcc ?? []).map((a) => ({ ...a, kind: "bcc" as const }))
]

/** The API's request as acceptance reads it: one shared stored part for every personalization, never copied per message. */
export const mailOfRequest = (request: CanonicalRequest): MailToAccept => {
  const storedFor = structuredMessages(request)
  return {
    fromEmail: request.from.email,
    personalizations: request.personalizations.map(recipientsOf),
    messageOf: (index) => ({ subject: request.personalizations[index]?.subject ?? request.subject, stored: storedFor(index) }),
    scheduled: request.send_at === undefined ? undefined : { sendAt: request.send_at, request }
  }
}

/** The whole 202 body: the flat form's answer adds its one item's message_id at the top. */
/**
 * What became of an accepted send, as the metrics count it (src/lib/metrics.ts
 * `recordAcceptedSend`, called by each entry with its channel: the API's send, SMTP submission).
 */
export const acceptedOutcome = (response: SendResponse): SendOutcome =>
  response.sandbox
    ? "sandbox"
    : response.message === "scheduled"
    ? "scheduled"
    : response.items.some((item) => item.status === "queued")
    ? "queued"
    : "nothing_to_send"

const answer = (input: SendBase, response: SendResponse): SendResponse =>
  input.form === "flat" && response.items[0] !== undefined
    ? { ...response, message_id: response.items[0].message_id }
    : response


/**
 * Account status and sender domain: both refuse the whole request. Every path that produces mail
 * for an account (sends, the scheduler's release, a template's test-send) applies this. Mail only
 * to simulator addresses needs the domain added, not verified: it is how a sender tries Herald
 * before its DNS records are published, and its mail never leaves the appliance.
 */
export const refuseSender = (
  fromEmail: string,
  recipients: ReadonlyArray<string>,
  limits: Limits,
  domainState: SenderFacts["domainState"]
) =>
  Effect.gen(function*() {
    if (limits.status === "suspended") return yield* new AccountSuspended()
    if (limits.pausedReason !== null) return yield* new SendingPaused({ reason: limits.pausedReason })
    const simulatorOnly = domainState !== "not_registered" && allSimulatorAddresses(recipients)
    if (domainState !== "ok" && !simulatorOnly) {
      return yield* new SenderDomainNotAuthorized({ domain: domainOf(fromEmail), state: domainState })
    }
  })

export class Accept extends Effect.Service<Accept>()("herald/Accept", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const domains = yield* Domains
    const suppressions = yield* Suppressions
    const idempotency = yield* Idempotency
    const signal = yield* QueueSignal
    const quota = yield* QuotaReserver
    const queueWriter = yield* QueueWriter

    const refuse = (mail: MailToAccept, limits: Limits, domainState: SenderFacts["domainState"]) =>
      refuseSender(mail.fromEmail, [...new Set(mail.personalizations.flat().map((r) => r.email.toLowerCase()))], limits, domainState)

    /** The scheduler's re-check at release: the same rules, the domain read on its own. */
    const checkSender = (input: AcceptInput, limits: Limits) =>
      Effect.gen(function*() {
        const { state } = yield* domains.sendingState(input.accountId, domainOf(input.request.from.email), input.now)
        yield* refuse(mailOfRequest(input.request), limits, state)
        return limits
      })

    const planWith = (input: SendBase, mail: MailToAccept, facts: Pick<SenderFacts, "suppressed" | "blockedDomains">) =>
      planItems({
        personalizations: mail.personalizations,
        suppressed: facts.suppressed,
        blockedDomains: facts.blockedDomains,
        maxRecipients: input.maxRecipients
      })

    /** The recipients' suppressions and blocked domains, read on their own (not in send-context.ts's round trip). */
    const recipientFacts = (accountId: string, recipients: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const suppressed = yield* suppressions.check(accountId, recipients)
        const blocked = yield* sql<{ domain: string }>`
          SELECT domain FROM blocked_domains WHERE domain IN ${sql.in([...new Set(recipients.map(domainOf))])}`
        return { suppressed, blockedDomains: new Set(blocked.map((b) => b.domain)) }
      })

    /** The scheduler's plan at release, its suppressions and block list read on their own. */
    const plan = (input: AcceptInput) =>
      Effect.flatMap(
        recipientFacts(input.accountId, recipientAddresses(input.request)),
        (facts) => Effect.succeed(planWith(input, mailOfRequest(input.request), facts))
      )

    /**
     * Acceptance of a send from any entry (the API's JSON, SMTP submission), given the sender's
     * facts (send-context.ts's one round trip, or submission/sender-facts.ts's).
     */
    const acceptMail = (input: MailInput, limits: Limits, facts: SenderFacts) =>
      Effect.gen(function*() {
        const { mail } = input
        yield* refuse(mail, limits, facts.domainState)
        const planned = planWith(input, mail, facts)
        const ids = planned.map(() => newId("msg"))
        const items: ReadonlyArray<SendItem> = planned.map((item, i) => ({
          personalization_index: item.index,
          status: item.status,
          message_id: input.sandbox ? `sandbox-${ids[i]}` : ids[i]!,
          sandbox: input.sandbox,
          ...(item.error === undefined ? {} : { error: item.error })
        }))
        const queued = planned.filter((item) => item.status === "queued")
        const base = { app: input.keyId, request_id: input.requestId, sandbox: input.sandbox, items }
        if (input.sandbox) {
          return answer(input, { ...base, message: queued.length > 0 ? "accepted (sandbox: nothing was sent)" : "nothing to send" })
        }

        // Only an Idempotency-Key compares bodies: no hash on the usual send's path.
        const keyed = Option.map(input.idempotencyKey, (key) => ({ key, hash: hashBody(input.rawBody) }))
        const replayStored = ({ hash, key }: { readonly key: string; readonly hash: Buffer }) =>
          Effect.gen(function*() {
            const found = yield* idempotency.lookup(input.keyId, key, hash, input.now)
            if (Option.isNone(found)) return
            if (found.value._tag === "conflict") return yield* new IdempotencyConflict({ key })
            return yield* new IdempotentReplay({ status: found.value.status, response: found.value.response })
          })
        if (Option.isSome(keyed)) yield* replayStored(keyed.value)

        const scheduled = mail.scheduled !== undefined && queued.length > 0
        const response = answer(input, scheduled
          ? { ...base, message: "scheduled", id: newId("sch") }
          : { ...base, message: queued.length > 0 ? "accepted" : "nothing to send" })
        const messages: ReadonlyArray<QueuedMessage> = queued.map((item) => ({
          messageId: ids[planned.indexOf(item)]!,
          personalizationIndex: item.index,
          ...mail.messageOf(item.index),
          recipients: item.recipients
        }))

        // Simulator recipients count against the rate limit (read before), never the monthly quota.
        const recipientCount = scheduled ? 0 : messages.reduce((n, m) => n + quotaCountOf(m.recipients.map((r) => r.email)), 0)
        if (recipientCount > 0) yield* quota.reserve({ limits, keyId: input.keyId, requested: recipientCount })
        const context = {
          accountId: input.accountId,
          keyId: input.keyId,
          requestId: input.requestId,
          fromEmail: mail.fromEmail,
          now: input.now
        }
        const rows: Effect.Effect<void, SqlError, SqlClient.SqlClient> = scheduled
          ? schedule({
            id: response.id!,
            accountId: input.accountId,
            keyId: input.keyId,
            requestId: input.requestId,
            messageId: messages[0]!.messageId,
            request: mail.scheduled!.request,
            sendAt: new Date(mail.scheduled!.sendAt),
            now: input.now
          })
          : Effect.asVoid(writeQueue(context, messages))
        // Without an Idempotency-Key the queue rows are one statement with those of the sends that
        // arrived together (QueueWriter's group commit), the 202 after the commit that holds them.
        const commit: Effect.Effect<void, SqlError | IdempotencyRace, SqlClient.SqlClient> = Option.isNone(keyed)
          ? (scheduled ? rows : queueWriter.write({ context, messages }))
          : sql.withTransaction(Effect.gen(function*() {
          yield* rows
          const stored = yield* idempotency.record(input.keyId, keyed.value.key, keyed.value.hash, 202, response, input.now)
          // A twin request committed first: roll back ours and answer with the twin's response.
          if (!stored) return yield* new IdempotencyRace({ keyed: keyed.value })
        }))
        yield* commit.pipe(
          Effect.onError(() => (recipientCount > 0 ? Effect.ignoreLogged(releaseQuota(limits, input.keyId, recipientCount)) : Effect.void)),
          Effect.catchTag("IdempotencyRace", (race) =>
            Effect.flatMap(replayStored(race.keyed), () =>
              Effect.die(new Error("idempotency record vanished during a race"))))
        )
        if (!scheduled && messages.length > 0) yield* signal.wake("herald_queue")
        return response
      })

    /** The send endpoint's acceptance, given what send-context.ts read in its one round trip. */
    const accept = (input: AcceptInput, limits: Limits, facts: SenderFacts) =>
      acceptMail({ ...input, mail: mailOfRequest(input.request) }, limits, facts)

    return { accept, acceptMail, plan, checkSender } as const
  })
}) {}
