/** The reference's errors and examples for /v1/mail/scheduled (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { ScheduledGroup } from "./Api.ts"

const NOT_FOUND = "404 `not_found` when the account has no scheduled send `{id}`."
const scheduled = {
  id: "sch_2Df5Gh8Jk1Lm4Np7Qr0S",
  status: "scheduled",
  send_at: "2026-12-01T09:00:00.000Z",
  message_id: "msg_3Fj7Kq2Mv9Xs1Tz5Wd8N",
  created_at: "2026-11-02T10:15:00.000Z",
  reason: null
}

export const scheduledReference: GroupReference<typeof ScheduledGroup> = {
  get: { errors: NOT_FOUND, response: scheduled },
  cancel: {
    errors: `${NOT_FOUND} 409 \`conflict\` when it is no longer scheduled (released, cancelled or discarded).`,
    response: { ...scheduled, status: "cancelled" }
  }
}
