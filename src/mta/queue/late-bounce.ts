/**
 * A DSN arriving after the delivery was handed over: the far side accepted the message and gave up
 * later, so the delivery turns `bounced` even from `sent` (DESIGN "Bounces"). The delivery's states
 * belong to the queue (DeliveryQueue.ts); this is the one change to them made from outside the MTA,
 * kept here so that every statement that moves a delivery's state lives in src/mta/queue/.
 * Runs inside the inbound processor's transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface LateBounce {
  readonly deliveryId: string
  readonly status: string
  readonly diagnostic: string | null
  readonly now: Date
}

/**
 * The SMTP reply code a DSN's Diagnostic-Code names (`smtp; 550 5.1.1 …`, RFC 3464 §2.3.6), or
 * null when it names none (another diagnostic type, or no diagnostic at all).
 */
export const diagnosticReplyCode = (diagnostic: string | null): number | null => {
  const match = /^\s*(?:smtp\s*;\s*)?([245]\d\d)(?![\d])/i.exec(diagnostic ?? "")
  return match === null ? null : Number(match[1])
}

/**
 * Marks the delivery bounced and releases any lease on it. True when it changed; false when it was
 * already bounced (remote MTAs send duplicate DSNs: the second one changes nothing).
 * The last reply becomes the DSN's, code included: the audit log shows the status and diagnostic
 * the far side gave up with, not the 250 it had answered at the handover.
 */
export const markBouncedLate = (bounce: LateBounce) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const changed = yield* sql`
      UPDATE deliveries SET state = 'bounced', last_code = ${diagnosticReplyCode(bounce.diagnostic)}, last_status = ${bounce.status},
        last_reply = ${bounce.diagnostic === null ? null : bounce.diagnostic.slice(0, 1000)}, updated_at = ${bounce.now},
        completed_at = coalesce(completed_at, ${bounce.now}), lease_owner = NULL
      WHERE id = ${bounce.deliveryId} AND state <> 'bounced'
      RETURNING id`
    return changed.length > 0
  })
