/**
 * Who uses a template: deleting one that a campaign not yet completed or a sequence step uses is
 * refused (409 `conflict`). The campaigns and sequences issues own those tables; each adds its
 * check to `TEMPLATE_USER_CHECKS` (a query that names the users of a template, e.g.
 * `campaign cp_… (sending)`).
 */
import { Effect } from "effect"
import { campaignsUsingTemplate } from "../campaigns/users.ts"
import type { TemplateUserCheck } from "../resource-users.ts"
import { sequenceStepsUsingTemplate } from "../sequences/template-users.ts"

export const TEMPLATE_USER_CHECKS: ReadonlyArray<TemplateUserCheck> = [campaignsUsingTemplate, sequenceStepsUsingTemplate]

/** Every user of the template, described for the 409's message; empty when it may be deleted. */
export const templateUsers = (templateId: string, checks: ReadonlyArray<TemplateUserCheck> = TEMPLATE_USER_CHECKS) =>
  Effect.map(Effect.forEach(checks, (check) => check(templateId)), (found) => found.flat())
