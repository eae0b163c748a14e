/** Raw inbound messages in PostgreSQL: committed before the listener answers 250. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import { QueueSignal } from "../../mta/queue/QueueSignal.ts"
import { INBOUND_CHANNEL } from "../processor/Processor.ts"

export interface ReceivedEnvelope {
  readonly remoteAddress: string
  readonly helo: string | null
  readonly mailFrom: string
  readonly rcptTo: ReadonlyArray<string>
}

export class InboundStore extends Effect.Service<InboundStore>()("herald/InboundStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const signal = yield* QueueSignal

    const store = (envelope: ReceivedEnvelope, raw: Buffer) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const id = newId("inb")
        yield* sql`
          INSERT INTO inbound_messages (id, received_at, remote_address, helo, mail_from, rcpt_to, size, raw, next_attempt_at)
          VALUES (${id}, ${now}, ${envelope.remoteAddress}, ${envelope.helo}, ${envelope.mailFrom},
            ${JSON.stringify(envelope.rcptTo)}::jsonb, ${raw.length}, ${raw}, ${now})`
        yield* signal.wake(INBOUND_CHANNEL)
        return id
      })

    return { store } as const
  })
}) {}
