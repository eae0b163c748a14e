/**
 * The refusals every bulk call that makes mail answers (src/bulk/http-answers.ts mailingAnswer),
 * worded once for the reference's descriptions (each group's examples.ts).
 */
export const MAILING_ERRORS = "The send's refusals apply: 403 `account_suspended`, `sending_paused` or `domain_not_verified` "
  + "(the sender's domain); 429 `monthly_quota_exceeded`, or `rate_limit_exceeded` over the key's per-minute window shared "
  + "with sends; 400 `overage_not_offered` when the mail needs more than the quota left and the plan has no overage, "
  + "`render_failed` when the content does not render; 503 `render_busy` when every render worker is taken."
