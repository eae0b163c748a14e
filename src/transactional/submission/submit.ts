/**
 * The end of DATA: one SMTP transaction is one send request, accepted by the send path's own core
 * (Accept.acceptMail) — sender domain, suppressions, block list, sandbox, Idempotency-Key, quota,
 * the queue rows — and answered 250 only after the commit that holds its rows, with the message's
 * id; a refusal with the API's wording (replies.ts). The rate window was counted at MAIL.
 */
import { Effect, Either } from "effect"
import type { Principal } from "../../http/key-lookup.ts"
import type { Limits } from "../../platform/usage/AccountLimits.ts"
import { recordAcceptedSend } from "../../lib/metrics.ts"
import { Accept, acceptedOutcome } from "../accept.ts"
import { checkSizes, type SizeLimits } from "../limits.ts"
import { isMailRefusal } from "../mail-refusals.ts"
import { type Envelope, readSubmission, type Refusal } from "./message.ts"
import { idempotencyConflict, refusalReply, temporaryFailure, tooLarge } from "./replies.ts"
import type { ReadSenderFacts } from "./sender-facts.ts"

/** What MAIL decided of the transaction: its key, its account's limits and its request id. */
export interface Transaction {
  readonly principal: Principal
  readonly limits: Limits
  readonly requestId: string
}

export interface SubmitOptions {
  readonly sizes: SizeLimits
  /** HERALD_MAX_RECIPIENTS: RCPT already kept to it, so the one message is never `failed`. */
  readonly maxRecipients: number
  /** The sender's and recipients' facts, read with those of the submissions ending together. */
  readonly readFacts: ReadSenderFacts
}

const queuedAs = (messageId: string): Refusal => ({ code: 250, text: `2.0.0 queued as ${messageId}` })

/** The first message id of a stored 202 (a replay answers the first message's id). */
const replayedId = (response: unknown): Refusal => {
  try {
    const body = JSON.parse(String(response)) as { items?: ReadonlyArray<{ message_id?: string }> }
    const id = body.items?.[0]?.message_id
    return id === undefined ? temporaryFailure : queuedAs(id)
  } catch {
    return temporaryFailure
  }
}

/** Accepts the message `raw` of `envelope`: the reply to give (250, or the refusal). */
export const submit = (transaction: Transaction, envelope: Envelope, raw: Buffer, now: Date, options: SubmitOptions) =>
  Effect.gen(function*() {
    const accept = yield* Accept
    const read = readSubmission(raw, envelope)
    if (Either.isLeft(read)) return read.left
    const submission = read.right
    const over = checkSizes(submission.attachments, options.sizes)
    if (over !== null) return tooLarge(over)
    const { principal, limits } = transaction
    const recipients = [...new Set(envelope.rcptTo.map((r) => r.toLowerCase()))]
    const facts = yield* options.readFacts({ accountId: principal.accountId, fromEmail: submission.mail.fromEmail, recipients, now })
    const response = yield* accept.acceptMail({
      accountId: principal.accountId,
      keyId: principal.keyId,
      requestId: transaction.requestId,
      now,
      sandbox: submission.sandbox,
      rawBody: submission.hashSource,
      idempotencyKey: submission.idempotencyKey,
      maxRecipients: options.maxRecipients,
      mail: submission.mail
    }, limits, facts)
    recordAcceptedSend("smtp", acceptedOutcome(response), response.items)
    const [item] = response.items
    if (item === undefined) return temporaryFailure
    // Every envelope recipient's domain was refused by policy after RCPT took it: nothing was queued.
    if (item.status === "rejected") return { code: 550, text: `5.7.1 ${item.error ?? "recipient domain refused by policy"}` }
    // Queued, or every recipient suppressed (recorded as the API records it, and answered alike).
    return queuedAs(item.message_id)
  }).pipe(
    Effect.catchTags({
      IdempotentReplay: (e) => Effect.sync(() => recordAcceptedSend("smtp", "replayed", [])).pipe(Effect.as(replayedId(e.response))),
      IdempotencyConflict: (e) => Effect.succeed(idempotencyConflict(e.key))
    }),
    Effect.catchIf(isMailRefusal, (e) => Effect.succeed(refusalReply(e))),
    Effect.catchAll((error) => Effect.as(Effect.logError("could not accept a submitted message", error), temporaryFailure))
  )

export const isAccepted = (reply: Refusal) => reply.code === 250
