/**
 * The simulated attempt: what the SMTP transaction would have decided for a recipient at the
 * simulator domain (src/lib/simulator.ts), decided here instead, with no MX lookup, no DKIM
 * signature and no destination slot — the mail never leaves the appliance. Everything else is the
 * real pipeline: the attempt is claimed, checked and leased like any other, and its Outcome is
 * written by the same outcome writer (DeliveryQueue.completeMany), so the delivery's state, its
 * outcome event, the audit row and the webhooks are the ones a real delivery gets.
 *
 * - delivered → sent (250 2.0.0);
 * - bounce → bounced, 550 5.1.1 hard, never suppressing (a simulator address is on no list);
 * - complaint → sent, then `email.complained` with isp "simulator";
 * - defer → deferred twice, retried 2 s after the first deferral and 4 s after the second (the
 *   simulator's own schedule, so a first send shows a retry in seconds, not minutes), then sent;
 * - suppressed → acceptance leaves it out (item status `suppressed`, plan-items.ts); a row that
 *   reaches the MTA anyway (written some other way) fails as a suppressed address does;
 * - any other local part → failed: acceptance refuses it, so only a row written some other way.
 *
 * Why the complaint is written here, in the transaction of the sent outcome, rather than through
 * inbound's applyComplaint: a real complaint is a report about a delivery that is on record, and
 * applyComplaint records it (inbound_complaints), suppresses the address and feeds the reputation
 * counts — none of which a simulated complaint may do. What they share is the event itself
 * (EmailComplained, written through the outbox as applyComplaint writes it). Written with the sent
 * outcome, it cannot be lost between the two, and it is stamped a millisecond after the sent event
 * so that the outbox (ordered by time) hands them to the webhooks in the order they happen.
 * A campaign's simulated complaint is also written as the address's `complained` fact naming the
 * campaign (history only: no contact status moves), so the campaign's analytics count it as they
 * count a real one, and a sender trying campaigns on the simulator sees every column move (bulk
 * records it: the DeliveryHooks port of ports.ts, reached through the queue that holds it).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../events/outbox.ts"
import { EmailComplained } from "../events/schema.ts"
import { SIMULATOR_DOMAIN, SIMULATOR_ISP, simulatorScenario } from "../lib/simulator.ts"
import { type ClaimedDelivery, type Completion, type DeliveryQueue, type Outcome, subjectSent } from "./queue/DeliveryQueue.ts"

/** The simulator's own retry schedule for `defer`: 2 s after the first deferral, 4 s after the second, then sent. */
export const SIMULATOR_RETRY_DELAYS_MS: ReadonlyArray<number> = [2_000, 4_000]


const sent: Outcome = { _tag: "sent", code: 250, status: "2.0.0", reply: `2.0.0 accepted by the simulator (${SIMULATOR_DOMAIN})` }

/** What the simulated attempt of `d` decides (pure). */
export const simulatedOutcome = (d: ClaimedDelivery, now: Date): Outcome => {
  const scenario = simulatorScenario(d.recipient)
  switch (scenario) {
    case "delivered":
    case "complaint":
      return sent
    case "bounce":
      return {
        _tag: "bounced",
        code: 550,
        status: "5.1.1",
        category: "hard",
        reply: `5.1.1 <${d.recipient}>: no such mailbox (simulated bounce)`,
        suppress: false
      }
    case "defer": {
      const delay = SIMULATOR_RETRY_DELAYS_MS[d.attempts]
      return delay === undefined ? sent : {
        _tag: "deferred",
        code: 451,
        status: "4.2.0",
        reply: `4.2.0 <${d.recipient}>: mailbox busy, try again later (simulated deferral ${d.attempts + 1} of ${SIMULATOR_RETRY_DELAYS_MS.length})`,
        retryAt: new Date(now.getTime() + delay)
      }
    }
    case "suppressed":
      return { _tag: "failed", code: null, status: "5.7.1", reply: "recipient suppressed (simulator)" }
    case undefined:
      return { _tag: "failed", code: null, status: "5.1.1", reply: `${d.recipient} names no simulator scenario` }
  }
}

/** Whether the simulated outcome of `d` is followed by a complaint. */
export const complainsAfter = (d: ClaimedDelivery): boolean => simulatorScenario(d.recipient) === "complaint"

/**
 * Writes a `complaint` delivery's sent outcome and its complaint event in one transaction (see the
 * header for why not applyComplaint). Answers whether the outcome was written (the lease held).
 */
export const completeWithComplaint = (queue: DeliveryQueue, c: Completion) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const [written] = yield* queue.completeMany([c])
      if (written !== true) return false
      const { account_id: accountId, key_id: keyId } = c.d
      // System mail has no account to hear of the complaint.
      if (accountId === null || keyId === null) return true
      yield* emitEvent({
        accountId,
        keyId,
        event: EmailComplained.make({ email: c.d.recipient, isp: SIMULATOR_ISP, subject: subjectSent(c) }),
        at: new Date(c.now.getTime() + 1)
      })
      if (c.m.origin === "campaign" && c.m.origin_ref !== null) {
        yield* queue.deliveryHooks.campaignComplaintSimulated({
          accountId,
          email: c.d.recipient,
          at: new Date(c.now.getTime() + 1),
          messageId: c.m.id,
          campaignId: c.m.origin_ref,
          detail: `simulated complaint (${SIMULATOR_ISP})`
        })
      }
      return true
    })))
