/** The reference's errors and examples for the support tickets, client and operator (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { AdminTicketsGroup, TicketsGroup } from "./Api.ts"

const TICKET_ID = "tkt_3Er6Ty9Ui2Op5As8Df1G"
const question = { id: "tmsg_7Gh0Jk3Lz6Xc9Vb2Nm5Q", author: "customer", body: "Our campaign is paused with reason quota_exhausted. Can the quota be raised this month?", created_at: "2026-11-04T09:00:00.000Z" }
const answer = { id: "tmsg_1Qw4Er7Ty0Ui3Op6As9D", author: "support", body: "Done: the quota is 150,000 until the next reset.", created_at: "2026-11-04T10:30:00.000Z" }
const summary = {
  id: TICKET_ID,
  account_id: "acc_9Lk6Jh3Gf0Ds7Ap4Oi1U",
  subject: "Raise the monthly quota",
  status: "open",
  priority: "high",
  category: "billing",
  created_at: "2026-11-04T09:00:00.000Z",
  updated_at: "2026-11-04T09:00:00.000Z"
}
const ticket = { ...summary, messages: [question] }
const answered = { ...summary, status: "answered", updated_at: "2026-11-04T10:30:00.000Z", messages: [question, answer] }
const NOT_FOUND = "404 `not_found` when the account has no ticket `{id}`."
const ADMIN = "403 `forbidden` for a key that is not an administrator's."

export const ticketsReference: GroupReference<typeof TicketsGroup> = {
  open: {
    errors: "No errors of its own.",
    request: { subject: "Raise the monthly quota", body: question.body, priority: "high", category: "billing" },
    response: ticket
  },
  list: { errors: "No errors of its own.", response: { items: [summary] } },
  read: { errors: NOT_FOUND, response: answered },
  reply: {
    errors: NOT_FOUND,
    request: { body: "Thank you!" },
    response: {
      ...answered,
      status: "open",
      messages: [...answered.messages, { id: "tmsg_5Zx8Cv1Bn4Mq7Wr0Ty3U", author: "customer", body: "Thank you!", created_at: "2026-11-04T11:00:00.000Z" }]
    }
  }
}

export const adminTicketsReference: GroupReference<typeof AdminTicketsGroup> = {
  adminList: { errors: ADMIN, response: { items: [summary] } },
  adminRead: { errors: `${ADMIN} 404 \`not_found\` when there is no ticket \`{id}\`.`, response: ticket },
  adminReply: {
    errors: `${ADMIN} 404 \`not_found\` when there is no ticket \`{id}\`.`,
    request: { body: answer.body },
    response: answered
  }
}
