/** The reference's errors and examples for GET /v1/admin/inbound (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { AdminInboundGroup } from "./Api.ts"

export const adminInboundReference: GroupReference<typeof AdminInboundGroup> = {
  list: {
    errors: "403 `forbidden` for a key that is not an administrator's; 422 `query_too_expensive` when the read runs past the "
      + "statement timeout.",
    response: {
      total: 1,
      limit: 50,
      offset: 0,
      items: [{
        id: "inb_5Rf8Tg1Yh4Uj7Ik0Ol3Pz",
        received_at: "2026-11-04T09:00:00.000Z",
        processed_at: "2026-11-04T09:00:01.000Z",
        remote_address: "203.0.113.25",
        helo: "mx.example.net",
        mail_from: "mailer-daemon@example.net",
        rcpt_to: ["bounces@herald.example.org"],
        size: 4210,
        state: "processed",
        kind: "dsn",
        authenticated_as: null,
        refused: false,
        reason: null
      }]
    }
  }
}
