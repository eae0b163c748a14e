/**
 * Support tickets: an account opens one (subject, body, priority, category), reads and answers its
 * own; an admin lists every ticket and answers. Status: open (waiting for support), answered
 * (support replied; a customer reply reopens it), closed.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { newId } from "../../lib/ids.ts"

export type TicketStatus = "open" | "answered" | "closed"
export type TicketPriority = "low" | "normal" | "high" | "urgent"

export class TicketNotFound extends Data.TaggedError("TicketNotFound")<{ readonly id: string }> {}

interface TicketRow {
  readonly id: string
  readonly account_id: string
  readonly subject: string
  readonly status: TicketStatus
  readonly priority: TicketPriority
  readonly category: string
  readonly created_at: Date
  readonly updated_at: Date
}

interface MessageRow {
  readonly id: string
  readonly author: "customer" | "support"
  readonly body: string
  readonly created_at: Date
}

const ticketView = (t: TicketRow) => ({
  id: t.id,
  account_id: t.account_id,
  subject: t.subject,
  status: t.status,
  priority: t.priority,
  category: t.category,
  created_at: t.created_at.toISOString(),
  updated_at: t.updated_at.toISOString()
})

const messageView = (m: MessageRow) => ({ id: m.id, author: m.author, body: m.body, created_at: m.created_at.toISOString() })

export class Tickets extends Effect.Service<Tickets>()("herald/Tickets", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** `accountId` null = an admin, who may read any ticket. */
    const find = (accountId: string | null, id: string) =>
      Effect.gen(function*() {
        const [row] = yield* sql<TicketRow>`SELECT * FROM tickets WHERE id = ${id}`
        if (row === undefined || (accountId !== null && row.account_id !== accountId)) {
          return yield* new TicketNotFound({ id })
        }
        return row
      })

    const read = (accountId: string | null, id: string) =>
      Effect.gen(function*() {
        const ticket = yield* find(accountId, id)
        const messages = yield* sql<MessageRow>`
          SELECT id, author, body, created_at FROM ticket_messages WHERE ticket_id = ${id} ORDER BY created_at, id`
        return { ...ticketView(ticket), messages: messages.map(messageView) }
      })

    const open = (accountId: string, keyId: string, input: {
      subject: string
      body: string
      priority: TicketPriority
      category: string
    }) =>
      Effect.gen(function*() {
        const at = yield* now
        const id = newId("tkt")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO tickets (id, account_id, subject, priority, category, created_at, updated_at)
            VALUES (${id}, ${accountId}, ${input.subject}, ${input.priority}, ${input.category}, ${at}, ${at})`
          yield* sql`INSERT INTO ticket_messages (id, ticket_id, author, author_key_id, body, created_at)
            VALUES (${newId("tmsg")}, ${id}, 'customer', ${keyId}, ${input.body}, ${at})`
        }))
        return yield* read(accountId, id)
      })

    /** A reply: the customer's reopens the ticket, support's marks it answered (or sets `status`). */
    const reply = (accountId: string | null, keyId: string, id: string, body: string, status?: TicketStatus) =>
      Effect.gen(function*() {
        yield* find(accountId, id)
        const at = yield* now
        const author = accountId === null ? "support" : "customer"
        const next = status ?? (author === "support" ? "answered" : "open")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ticket_messages (id, ticket_id, author, author_key_id, body, created_at)
            VALUES (${newId("tmsg")}, ${id}, ${author}, ${keyId}, ${body}, ${at})`
          yield* sql`UPDATE tickets SET status = ${next}, updated_at = ${at} WHERE id = ${id}`
        }))
        return yield* read(accountId, id)
      })

    const list = (accountId: string | null, status?: TicketStatus) =>
      sql<TicketRow>`SELECT * FROM tickets WHERE ${
        sql.and([
          ...(accountId === null ? [] : [sql`account_id = ${accountId}`]),
          ...(status === undefined ? [] : [sql`status = ${status}`])
        ])
      } ORDER BY updated_at DESC, id DESC LIMIT 500`.pipe(Effect.map((rows) => ({ items: rows.map(ticketView) })))

    return { open, read, reply, list } as const
  })
}) {}
