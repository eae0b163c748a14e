/**
 * One submission session's rules, as smtp-server handlers (README "SMTP submission"):
 * - connections: at most HERALD_SMTP_MAX_CONNECTIONS_PER_IP per client address (421 at connect)
 *   and MAX_SESSIONS_PER_ACCOUNT per account (421 at AUTH);
 * - AUTH PLAIN or LOGIN with an API key as the password (any user name), only over TLS or from
 *   loopback (538 5.7.11 otherwise, whatever HERALD_ENV says); a bad key 535 5.7.8, counted in the
 *   appliance's one table of failed authentications (AuthFailures, shared with the HTTP API and
 *   counted by every process together in PostgreSQL); an
 *   address past HERALD_AUTH_FAILURES_PER_MIN gets 421 until its minute passes, and the third
 *   failure of a session ends it (421);
 * - MAIL: 530 before AUTH; the send's per-minute rate window counted (SendContext.admit, 451 past
 *   it), a suspended account 550, paused sending 451;
 * - RCPT: at most 1,000 and HERALD_MAX_RECIPIENTS (452 4.5.3), an invalid address 553, a recipient
 *   domain on the block list 550;
 * - DATA: at most MAX_JSON_MB (the SIZE advertised; 552 past it), within
 *   HERALD_SUBMISSION_DATA_TIMEOUT_SECONDS, its bytes counted in the account's part of the body
 *   budget until the transaction ends (452 past it: data.ts), then the send path (submit.ts).
 */
import { Effect, Either } from "effect"
import type { SMTPServerAuthentication, SMTPServerDataStream, SMTPServerSession } from "smtp-server"
import type { AuthFailures } from "../../http/auth-failures.ts"
import type { BodyBudget } from "../../http/body-budget.ts"
import type { KeyLookup, Principal } from "../../http/key-lookup.ts"
import { currentRequest } from "../../http/request-context.ts"
import { domainOf, isEmailAddress } from "../../lib/email.ts"
import { randomBase62 } from "../../lib/ids.ts"
import { makeConnectionCounter, smtpReply } from "../../lib/smtp-listener.ts"
import { type BlockedDomains } from "../../platform/suppressions/BlockedDomains.ts"
import { AccountSuspended, SendingPaused } from "../accept.ts"
import type { SendContext } from "../send-context.ts"
import { type MessageData, readMessageData } from "./data.ts"
import type { Refusal } from "./message.ts"
import {
  authRequired,
  badKey,
  blockedRecipient,
  bodyBudgetFull,
  encryptionRequired,
  invalidRecipient,
  rateLimited,
  refusalReply,
  temporaryFailure,
  tooLarge,
  tooManyRecipients
} from "./replies.ts"
import { isAccepted, type SubmitOptions, type Transaction } from "./submit.ts"

/** RCPT per transaction (the bound), HERALD_MAX_RECIPIENTS permitting. */
export const MAX_RCPT = 1000
/** A session's failed AUTHs before it is ended: a client with a wrong key learns it at once, a guesser gets 3 tries a connection. */
export const MAX_AUTH_FAILURES_PER_SESSION = 3
/**
 * Sessions one account may hold at once, across its keys: an application sends over a few pooled
 * connections (nodemailer's pool opens 5), and one account must not take all HERALD_SMTP_MAX_CLIENTS.
 */
export const MAX_SESSIONS_PER_ACCOUNT = 20

/**
 * The host's own loopback addresses: AUTH without TLS only from these. Deliberately not all of
 * 127.0.0.0/8: that is how a container's or a proxy's traffic may be made to look local.
 */
const LOOPBACK: ReadonlySet<string> = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"])

const reply = (r: Refusal) => smtpReply(r.code, r.text)

/**
 * How long RCPT trusts the block list's answer for a domain: one query per RCPT was a round trip
 * of every transaction (bench:submission). A domain blocked meanwhile is still refused: the end of
 * DATA reads the block list again (sender-facts.ts), as the HTTP send does.
 */
const BLOCK_ANSWER_TTL_MS = 10_000
/** Domains remembered at once: past it the table starts again (a bound on memory, not a cache policy). */
const BLOCK_ANSWERS_MAX = 10_000

/** Answers per key, each for `ttlMs` from when it was read; at most `max` of them. */
const makeRecentAnswers = (ttlMs: number, max: number) => {
  const answers = new Map<string, { readonly value: boolean; readonly at: number }>()
  return {
    get: (key: string, now: number): boolean | undefined => {
      const answer = answers.get(key)
      return answer !== undefined && now - answer.at < ttlMs ? answer.value : undefined
    },
    set: (key: string, value: boolean, now: number): void => {
      if (answers.size >= max) answers.clear()
      answers.set(key, { value, at: now })
    }
  }
}

interface SessionState {
  counted: boolean
  failures: number
  account?: string | undefined
  transaction?: Transaction | undefined
  /** The DATA being read or answered: its room in the body budget is given back when the connection goes. */
  data?: MessageData | undefined
}

export interface SessionDeps {
  readonly run: <A>(effect: Effect.Effect<A, unknown, never>) => Promise<A>
  readonly now: () => number
  readonly maxPerIp: number
  readonly maxJsonBytes: number
  /** HERALD_SUBMISSION_DATA_TIMEOUT_SECONDS in ms: the most one message's DATA may take. */
  readonly dataDeadlineMs: number
  /** The process's body budget (the HTTP API's too): a message's bytes take room in its account's part. */
  readonly budget: BodyBudget
  readonly submitOptions: SubmitOptions
  readonly failures: AuthFailures
  readonly keys: KeyLookup["Type"]
  readonly sendContext: SendContext
  readonly blocked: BlockedDomains
  /** The reply at the end of DATA (submit.ts, with its services). */
  readonly submit: (transaction: Transaction, envelope: { mailFrom: string; rcptTo: ReadonlyArray<string> }, raw: Buffer, now: Date) => Effect.Effect<Refusal>
  /** Ends the session `id` at once (a DATA past its deadline). */
  readonly close: (id: string) => void
}

/** The smtp-server handlers of the submission listeners (both ports share them, and so their limits). */
export const makeSessionHandlers = (deps: SessionDeps) => {
  const states = new WeakMap<SMTPServerSession, SessionState>()
  const stateOf = (session: SMTPServerSession) => {
    let state = states.get(session)
    if (state === undefined) states.set(session, state = { counted: false, failures: 0 })
    return state
  }
  const perIp = makeConnectionCounter(deps.maxPerIp)
  const perAccount = makeConnectionCounter(MAX_SESSIONS_PER_ACCOUNT)
  const rcptLimit = Math.min(MAX_RCPT, deps.submitOptions.maxRecipients)
  const blockAnswers = makeRecentAnswers(BLOCK_ANSWER_TTL_MS, BLOCK_ANSWERS_MAX)

  const authenticate = (token: string, session: SMTPServerSession): Promise<Principal | Refusal> => {
    const address = session.remoteAddress
    const now = deps.now()
    const throttled = (until: number): Refusal => ({
      code: 421,
      text: `4.7.0 Too many failed authentications from this address (HERALD_AUTH_FAILURES_PER_MIN is ${deps.failures.limit} a minute); try again after ${new Date(until).toISOString()}`
    })
    const until = deps.failures.refusedUntil(address, now)
    if (until !== undefined) return Promise.resolve(throttled(until))
    // A token the cache does not know is looked up only under the appliance's limit (no allowance here).
    const identify = Effect.gen(function*() {
      const found = yield* deps.keys.authenticateSparingly(token, deps.failures.mayLookUp(address, now, false))
      if (found._tag === "Some") return found
      const known = deps.failures.refusedUntil(address, now)
      // Throttled by other processes' failures: refused without a lookup, nothing to count.
      if (known !== undefined) return known
      return yield* deps.failures.record(address, now)
    })
    return deps.run(identify).then((found) => {
      if (typeof found === "number") return throttled(found)
      if ("_tag" in found) return found.value
      const state = stateOf(session)
      state.failures += 1
      if (found.count >= deps.failures.limit) return throttled(found.end)
      return state.failures >= MAX_AUTH_FAILURES_PER_SESSION ? { ...badKey, code: 421, text: `4.7.0 ${badKey.text.slice(6)}; ${MAX_AUTH_FAILURES_PER_SESSION} failed authentications end the session` } : badKey
    })
  }

  /** MAIL: the rate window counted as a send's, then the account's own refusals. */
  const admit = (principal: Principal) =>
    Effect.gen(function*() {
      const requestId = `req_${randomBase62(20)}`
      const context = yield* Effect.either(deps.sendContext.admit(principal.keyId, principal.accountId, new Date(deps.now()), undefined))
      if (Either.isLeft(context)) {
        const e = context.left
        return e._tag === "MailRateLimited" ? rateLimited(e.limit, e.reset) : temporaryFailure
      }
      const { limits } = context.right
      if (limits.status === "suspended") return refusalReply(new AccountSuspended())
      if (limits.pausedReason !== null) return refusalReply(new SendingPaused({ reason: limits.pausedReason }))
      return { principal, limits, requestId } satisfies Transaction
    }).pipe(
      // The RateLimit headers admit sets belong to no HTTP response here: a state of this transaction's own.
      Effect.locally(currentRequest, { requestId: "", responseHeaders: {} }),
      Effect.catchAll(() => Effect.succeed(temporaryFailure))
    )

  return {
    onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (!perIp.enter(session.remoteAddress)) return callback(smtpReply(421, "4.7.0 Too many connections from your address"))
      stateOf(session).counted = true
      callback()
    },
    onClose(session: SMTPServerSession) {
      const state = states.get(session)
      if (state?.counted === true) perIp.leave(session.remoteAddress)
      if (state?.account !== undefined) perAccount.leave(state.account)
      state?.data?.abandon()
    },
    onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: { user: Principal }) => void) {
      if (!session.secure && !LOOPBACK.has(session.remoteAddress)) return callback(reply(encryptionRequired))
      authenticate(auth.password ?? "", session).then(
        (result) => {
          if ("code" in result) return callback(reply(result))
          if (!perAccount.enter(result.accountId)) return callback(smtpReply(421, "4.7.0 Too many connections for this account"))
          stateOf(session).account = result.accountId
          callback(null, { user: result })
        },
        () => callback(reply(temporaryFailure))
      )
    },
    onMailFrom(_address: unknown, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const principal = session.user as Principal | undefined
      if (principal === undefined) return callback(reply(authRequired))
      deps.run(admit(principal)).then((decided) => {
        if ("code" in decided) return callback(reply(decided))
        stateOf(session).transaction = decided
        callback()
      }, () => callback(reply(temporaryFailure)))
    },
    onRcptTo(address: { address: string }, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (session.envelope.rcptTo.length >= rcptLimit) return callback(reply(tooManyRecipients(rcptLimit)))
      if (!isEmailAddress(address.address)) return callback(reply(invalidRecipient(address.address)))
      const domain = domainOf(address.address)
      const known = blockAnswers.get(domain, deps.now())
      if (known !== undefined) return callback(known ? reply(blockedRecipient(domain)) : undefined)
      deps.run(deps.blocked.isBlocked(domain)).then(
        (blocked) => {
          blockAnswers.set(domain, blocked, deps.now())
          callback(blocked ? reply(blockedRecipient(domain)) : undefined)
        },
        () => callback(reply(temporaryFailure))
      )
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err: Error | null, message?: string) => void) {
      const state = stateOf(session)
      const transaction = state.transaction
      const principal = session.user as Principal | undefined
      const data = readMessageData(stream, {
        budget: deps.budget,
        // MAIL came after AUTH (530 otherwise): the message is its key's body.
        owner: { _tag: "Key", accountId: principal?.accountId ?? "", keyId: principal?.keyId ?? "" },
        deadlineMs: deps.dataDeadlineMs,
        onDeadline: () => deps.close(session.id)
      })
      state.data = data
      // The transaction ends with its reply: the message's room in the body budget goes back then.
      const answer = (decided: Promise<Refusal>) =>
        decided.then(
          (r) => (isAccepted(r) ? callback(null, r.text) : callback(reply(r))),
          () => callback(reply(temporaryFailure))
        ).finally(data.release)
      void data.received.then((received) => {
        if (received._tag === "TooLarge") return answer(Promise.resolve(tooLarge(`The request body is over the limit of ${deps.maxJsonBytes} bytes (MAX_JSON_MB)`)))
        if (received._tag === "OverBudget") return answer(Promise.resolve(bodyBudgetFull))
        if (transaction === undefined) return answer(Promise.resolve(authRequired))
        const envelope = {
          mailFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          rcptTo: session.envelope.rcptTo.map((r) => r.address)
        }
        // Durable before acknowledged: submit answers 250 only after the commit that holds the rows.
        return answer(deps.run(deps.submit(transaction, envelope, received.raw, new Date(deps.now()))))
      })
    }
  }
}
