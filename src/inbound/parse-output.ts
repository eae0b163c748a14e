/**
 * The operator's view of what Herald understood (the `parse` command's JSON, and the `result`
 * kept on each inbound message): only the key that matches `kind`, DMARC reports without their
 * record rows (a large report has thousands).
 */
import type { Understood } from "./parse/types.ts"

/** The error a DMARC or unreadable message carries, or null. */
export const errorOf = (understood: Understood): string | null =>
  "error" in understood && understood.error !== undefined ? understood.error : null

export const toParseOutput = (understood: Understood): Record<string, unknown> => {
  const message = errorOf(understood)
  const error = message === null ? {} : { error: message }
  switch (understood.kind) {
    case "bounce":
      return {
        kind: "bounce",
        bounce: {
          recipients: understood.bounce.recipients.map((r) => ({
            email: r.email,
            status: r.status,
            action: r.action,
            class: r.class,
            diagnostic: r.diagnostic
          }))
        }
      }
    case "complaint": {
      const c = understood.complaint
      return {
        kind: "complaint",
        complaint: { feedback_type: c.feedback_type, isp: c.isp, recipients: c.recipients, original_message_id: c.original_message_id }
      }
    }
    case "dmarc":
      return {
        kind: "dmarc",
        dmarc: understood.dmarc.map((d) => ({
          org_name: d.org_name,
          report_id: d.report_id,
          domain: d.domain,
          policy_p: d.policy_p,
          date_begin: d.date_begin,
          date_end: d.date_end,
          records: d.records,
          messages: d.messages
        })),
        ...error
      }
    case "other":
      return { kind: "other", ...error }
    case "unsubscribe":
      // How many candidates, not the tokens: they are capabilities, and the raw message is pruned in time.
      return { kind: "unsubscribe", unsubscribe: { token_candidates: understood.tokens.length } }
  }
}
