/**
 * Enqueueing (src/mta/queue/enqueue.ts): a usual send is one statement (messages and deliveries together), and a send
 * with more rows than one statement may carry is split into several statements of one transaction.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { newId } from "../../src/lib/ids.ts"
import { Accounts } from "../../src/platform/accounts/Accounts.ts"
import { ApiKeys } from "../../src/platform/keys/ApiKeys.ts"
import { structuredMessages } from "../../src/mta/queue/StoredMessage.ts"
import { writeQueue } from "../../src/mta/queue/enqueue.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"

const messagesOf = (personalizations: number, recipients: number) => {
  const request = {
    from: { email: "a@sender.example" },
    subject: "Hello",
    content: [{ type: "text/plain" as const, value: "Hello" }],
    personalizations: Array.from({ length: personalizations }, (_, p) => ({ to: [{ email: `p${p}r0@example.org` }] }))
  }
  const stored = structuredMessages(request)
  return Array.from({ length: personalizations }, (_, p) => ({
    messageId: newId("msg"),
    personalizationIndex: p,
    subject: "Hello",
    stored: stored(p),
    recipients: Array.from({ length: recipients }, (_, r) => ({ email: `p${p}r${r}@example.org`, kind: "to" as const }))
  }))
}

describe("writing the queue rows of a send", () => {
  it.live("writes every message and delivery, in one statement or in chunks past PostgreSQL's parameter limit", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const counts = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Writer", email: "writer@example.org", password: "a long password 123" })
        const key = yield* (yield* ApiKeys).create(account.id, "writer")
        const context = { accountId: account.id, keyId: key.id, requestId: "req_1", fromEmail: "a@sender.example", now: new Date() }
        yield* writeQueue(context, messagesOf(2, 3))
        // 1,000 messages and 7,000 deliveries: 80,000 parameters, more than one statement takes.
        yield* writeQueue(context, messagesOf(1000, 7))
        return yield* Effect.promise(() =>
          query<{ contents: number; messages: number; deliveries: number }>(databaseUrl, `SELECT
            (SELECT count(*)::int FROM message_contents) AS contents,
            (SELECT count(*)::int FROM messages) AS messages, (SELECT count(*)::int FROM deliveries) AS deliveries`)
        )
      }).pipe(Effect.provide(servicesOn(databaseUrl)), Effect.scoped)
      // One shared content row per send, whatever its personalizations.
      expect(counts).toEqual([{ contents: 2, messages: 1002, deliveries: 7006 }])
    }), 120_000)
})
