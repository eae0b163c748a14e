/** The reference's errors and examples for GET /v1/mail/audit (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { AuditGroup } from "./Api.ts"

export const auditReference: GroupReference<typeof AuditGroup> = {
  search: {
    errors: "403 `forbidden` when a client key gives client_id (it is for administrators); 422 `query_too_expensive` (param "
      + "names what to narrow) when the search runs past the statement timeout.",
    response: {
      total: 1,
      limit: 50,
      offset: 0,
      items: [{
        id: "dlv_6Yu9Io2Pa5Sd8Fg1Hj4K",
        ts: "2026-11-02T10:15:02.000Z",
        event: "sent",
        recipient: "ada@example.org",
        subject: "Your receipt",
        from: "hello@example.org",
        message_id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N",
        request_id: "req_8Hn2LpQ5rT1vW6yZ9bC4",
        app: "key_4kR2vX9mQ1sT7wZ0aB3c",
        attempts: 1,
        smtp_code: 250,
        smtp_status: "2.0.0",
        smtp_reply: "250 2.0.0 OK queued as 4XyZ",
        updated_at: "2026-11-02T10:15:02.000Z"
      }]
    }
  }
}
