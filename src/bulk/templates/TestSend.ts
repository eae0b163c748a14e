/**
 * POST /v1/bulk/templates/{id}/test-send: the template rendered with the sample variables and sent
 * through the MTA like any mail — channel `bulk`, origin `test_send` (no delivery events, DESIGN's
 * outcome table), subject prefixed `[Test] `, no tracking and no unsubscribe headers — and
 * answered once its queue row is committed. The send path's rules apply with the send path's own
 * code: the rate window and the account's limits, sender domain and suppressions read in its one
 * round trip (send-context.ts), `refuseSender`, the quota reservation (released if the write
 * fails), and the queue writer's group commit. A suppressed recipient is refused, not sent even
 * as a test.
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
}> {}

export class TestSend extends Effect.Service<TestSend>()("herald/TestSend", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const templates = yield* Templates
    const engine = yield* RenderEngine
    const sendContext = yield* SendContext
    const quota = yield* QuotaReserver
    const queueWriter = yield* QueueWriter
    const signal = yield* QueueSignal

    const send = (owner: Owner, templateId: string, body: TestSendRequest, requestId: string) =>
      Effect.gen(function*() {
        const template = yield* templates.read(owner, templateId)
        const fromEmail = body.from_email ?? template.from_email
        if (fromEmail === null) return yield* new NoSender()
        const fromName = body.from_email !== undefined ? body.from_name : body.from_name ?? template.from_name ?? undefined
        const to = body.to_email.toLowerCase()

        const rendered = yield* engine.render(owner.accountId, template, contactScope({ ...template.vars, ...body.sample_vars }, { email: body.to_email }))

        const now = new Date(yield* Clock.currentTimeMillis)
        const { limits, sender } = yield* sendContext.admit(owner.keyId, owner.accountId, now, { fromEmail, recipients: [to] })
        yield* refuseSender(fromEmail, [to], limits, sender!.domainState)
        const suppressed = sender!.suppressed.get(to)
        if (suppressed !== undefined) return yield* new RecipientSuppressed({ email: body.to_email, reason: suppressed })
        if (sender!.blockedDomains.has(domainOf(to))) return yield* new RecipientSuppressed({ email: body.to_email, reason: "blocked_domain" })

        const subject = `[Test] ${rendered.subject}`
        const stored = structuredMessages({
          from: fromName === undefined ? { email: fromEmail } : { email: fromEmail, name: fromName },
          subject,
          content: [
            { type: "text/plain" as const, value: rendered.text },
            ...(rendered.html === null ? [] : [{ type: "text/html" as const, value: rendered.html }])
          ],
          ...(template.reply_to === null ? {} : { reply_to: { email: template.reply_to } }),
          personalizations: [{ to: [{ email: body.to_email }] }]
        }, { origin: "test_send", channel: "bulk" })(0)
        const messageId = newId("msg")
        // A test-send to a simulator address is free, as a send to one is (src/lib/simulator.ts).
        const charged = quotaCountOf([to])
        if (charged > 0) yield* quota.reserve({ limits, keyId: owner.keyId, requested: charged })
        const write: Effect.Effect<void, SqlError> = queueWriter.write({
          context: { accountId: owner.accountId, keyId: owner.keyId, requestId, fromEmail, now },
          messages: [{ messageId, personalizationIndex: 0, subject, stored, recipients: [{ email: body.to_email, kind: "to" }] }]
        })
        yield* write.pipe(
          Effect.onError(() => charged === 0 ? Effect.void : Effect.ignoreLogged(releaseQuota(limits, owner.keyId, charged).pipe(Effect.provideService(SqlClient.SqlClient, sql))))
        )
        yield* signal.wake("herald_queue")
        return { ok: true as const, message_id: messageId, to: body.to_email }
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.catchTag("AccountMissing", Effect.die))

    return { send } as const
  })
}) {}
