/**
 * POST /v1/bulk/templates/{id}/test-send: the template rendered with the sample variables and sent
 * through the MTA like any mail — channel `bulk`, origin `test_send` (no delivery events, DESIGN's
 * outcome table), subject prefixed `[Test] `, no tracking and no unsubscribe headers — and
 * answered once its queue row is committed. The send path's rules apply with the send path's own
 * code: the rate window and the account's limits, sender domain and suppressions read in its one
 * round trip (send-context.ts), `refuseSender`, the quota reservation (released if the write
 * fails), and the queue writer's group commit. A suppressed recipient is refused, not sent even
 * as a test. `deliver` is that one path, which a campaign's test-send (src/bulk/campaigns/Preview.ts)
 * takes too with its own render and up to five recipients.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Data, Effect } from "effect"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { domainOf } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"
import { structuredMessages } from "../../mta/queue/StoredMessage.ts"
import type { SuppressionReason } from "../../platform/suppressions/Suppressions.ts"
import { quotaCountOf } from "../../lib/simulator.ts"
import { releaseQuota } from "../../platform/usage/Quota.ts"
import { QuotaReserver } from "../../platform/usage/QuotaReserver.ts"
import { refuseSender } from "../../transactional/accept.ts"
import { QueueWriter } from "../../mta/queue/enqueue.ts"
import { SendContext } from "../../transactional/send-context.ts"
import { contactScope } from "../render/content.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import { type Owner, Templates } from "./Templates.ts"

export interface TestSendRequest {
  readonly to_email: string
  readonly sample_vars?: Readonly<Record<string, unknown>> | undefined
  readonly from_email?: string | undefined
  readonly from_name?: string | undefined
}

export class NoSender extends Data.TaggedError("NoSender")<{}> {}
export class RecipientSuppressed extends Data.TaggedError("RecipientSuppressed")<{
  readonly email: string
  readonly reason: SuppressionReason | "blocked_domain"
  /** Which of the recipients given (0 for a template's one `to_email`). */
  readonly index: number
}> {}

/** A test message as rendered, from a sender, to up to a handful of addresses (each its own message). */
export interface TestMessage {
  readonly fromEmail: string
  readonly fromName?: string | undefined
  readonly replyTo?: string | null | undefined
  /** The subject as rendered; `[Test] ` is prefixed here. */
  readonly subject: string
  readonly text: string
  readonly html: string | null
}

export class TestSend extends Effect.Service<TestSend>()("herald/TestSend", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const templates = yield* Templates
    const engine = yield* RenderEngine
    const sendContext = yield* SendContext
    const quota = yield* QuotaReserver
    const queueWriter = yield* QueueWriter
    const signal = yield* QueueSignal

    /**
     * The one path of every test-send (a template's, a campaign's): the send's refusals, each
     * recipient's suppression, the quota for the chargeable ones, and one queue write of one
     * message per recipient. Counts once in the rate window, whatever the number of recipients.
     */
    const deliver = (owner: Owner, test: TestMessage, recipients: ReadonlyArray<string>, requestId: string) =>
      Effect.gen(function*() {
        const to = recipients.map((r) => r.toLowerCase())
        const now = new Date(yield* Clock.currentTimeMillis)
        const { limits, sender } = yield* sendContext.admit(owner.keyId, owner.accountId, now, { fromEmail: test.fromEmail, recipients: to })
        yield* refuseSender(test.fromEmail, to, limits, sender!.domainState)
        for (const [index, address] of to.entries()) {
          const suppressed = sender!.suppressed.get(address)
          if (suppressed !== undefined) return yield* new RecipientSuppressed({ email: recipients[index]!, reason: suppressed, index })
          if (sender!.blockedDomains.has(domainOf(address))) return yield* new RecipientSuppressed({ email: recipients[index]!, reason: "blocked_domain", index })
        }

        const subject = `[Test] ${test.subject}`
        const stored = structuredMessages({
          from: test.fromName === undefined ? { email: test.fromEmail } : { email: test.fromEmail, name: test.fromName },
          subject,
          content: [
            { type: "text/plain" as const, value: test.text },
            ...(test.html === null ? [] : [{ type: "text/html" as const, value: test.html }])
          ],
          ...(test.replyTo === null || test.replyTo === undefined ? {} : { reply_to: { email: test.replyTo } }),
          personalizations: recipients.map((email) => ({ to: [{ email }] }))
        }, { origin: "test_send", channel: "bulk" })
        const messages = recipients.map((email, i) => ({
          messageId: newId("msg"),
          personalizationIndex: i,
          subject,
          stored: stored(i),
          recipients: [{ email, kind: "to" as const }]
        }))
        // A test-send to a simulator address is free, as a send to one is (src/lib/simulator.ts).
        const charged = quotaCountOf(to)
        if (charged > 0) yield* quota.reserve({ limits, keyId: owner.keyId, requested: charged })
        const write: Effect.Effect<void, SqlError> = queueWriter.write({
          context: { accountId: owner.accountId, keyId: owner.keyId, requestId, fromEmail: test.fromEmail, now },
          messages
        })
        yield* write.pipe(
          Effect.onError(() => charged === 0 ? Effect.void : Effect.ignoreLogged(releaseQuota(limits, owner.keyId, charged).pipe(Effect.provideService(SqlClient.SqlClient, sql))))
        )
        yield* signal.wake("herald_queue")
        return messages.map((m) => m.messageId)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.catchTag("AccountMissing", Effect.die))

    const send = (owner: Owner, templateId: string, body: TestSendRequest, requestId: string) =>
      Effect.gen(function*() {
        const template = yield* templates.read(owner, templateId)
        const fromEmail = body.from_email ?? template.from_email
        if (fromEmail === null) return yield* new NoSender()
        const fromName = body.from_email !== undefined ? body.from_name : body.from_name ?? template.from_name ?? undefined
        const rendered = yield* engine.render(owner.accountId, template, contactScope({ ...template.vars, ...body.sample_vars }, { email: body.to_email }))
        const [messageId] = yield* deliver(owner, { fromEmail, fromName, replyTo: template.reply_to, subject: rendered.subject, text: rendered.text, html: rendered.html }, [body.to_email], requestId)
        return { ok: true as const, message_id: messageId!, to: body.to_email }
      })

    return { send, deliver } as const
  })
}) {}
