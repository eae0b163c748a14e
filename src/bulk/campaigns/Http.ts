import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { groupApi } from "../../http/group-api.ts"
import { CampaignsGroup } from "./Api.ts"
import { contentTooLargeAnswer, mailingAnswer, type MailingFailure } from "../http-answers.ts"
import { CurrentKey } from "../../http/auth.ts"
import type { QueryTooExpensive } from "../../db/statement-timeout.ts"
import {
  answerQueryTooExpensive,
  BadRequestError,
  conflict,
  type ConflictError,
  type ForbiddenError,
  notFound,
  type NotFoundError,
  type PayloadTooLargeError,
  RateLimitedError,
  type UnavailableError,
  type UnprocessableError,
  validationFailed
} from "../../http/errors.ts"
import type { TemplateTooLarge } from "../templates/fields.ts"
import { type CampaignInvalid, type CampaignNotFound, Campaigns, type CampaignStateConflict } from "./Campaigns.ts"
import { CampaignControl, type InvalidSchedule } from "./Control.ts"
import type { CampaignIncomplete } from "./freeze.ts"
import { overageMessage } from "../../transactional/mail-refusals.ts"
import { CampaignPreview, type NoSuchVariant } from "./Preview.ts"
import type { ContactNotFound } from "../contacts/Contacts.ts"
import type { NoSender, RecipientSuppressed } from "../templates/TestSend.ts"
import { requestId } from "../../http/request-context.ts"
import type { PostalAddressMissing } from "../settings/Settings.ts"

type Failure =
  | CampaignNotFound
  | CampaignStateConflict
  | CampaignInvalid
  | CampaignIncomplete
  | InvalidSchedule
  | TemplateTooLarge
  | MailingFailure
  | ContactNotFound
  | NoSuchVariant
  | NoSender
  | RecipientSuppressed
  | PostalAddressMissing

/** Every failure of this group as the API's envelope (SQL errors are defects: 500). */
const answer = (e: Failure): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | RateLimitedError | ForbiddenError | UnavailableError> => {
  switch (e._tag) {
    case "CampaignNotFound":
      return Effect.fail(notFound(`No campaign ${e.id}`))
    case "CampaignStateConflict":
      return Effect.fail(conflict(`The campaign ${e.id} is ${e.status}: ${e.call} is not allowed in that state`))
    case "CampaignInvalid":
    case "CampaignIncomplete":
      return Effect.fail(validationFailed(e.message, e.param))
    case "InvalidSchedule":
      return Effect.fail(validationFailed(e.message, "scheduled_at"))
    case "TemplateTooLarge":
      return contentTooLargeAnswer("A campaign's content", e.bytes)
    case "OverageNotOffered":
      // The send endpoint's code and message, and the campaign's own way out.
      return Effect.fail(new BadRequestError({
        type: "invalid_request_error",
        code: "overage_not_offered",
        message: `${overageMessage(e, "This campaign")}: send fewer recipients, or send with allow_partial: true to start anyway and pause when the quota runs out`
      }))
    case "ContactNotFound":
      return Effect.fail(notFound(`No contact ${e.ref}`))
    case "PostalAddressMissing":
      return Effect.fail(validationFailed("This key has no postal address: set it with PUT /v1/bulk/settings before sending bulk mail (CAN-SPAM)", "postal_address"))
    case "NoSuchVariant":
      return Effect.fail(validationFailed(
        e.count === 0 ? `This campaign has no variants: variant ${e.variant} does not exist` : `This campaign has variants 0 to ${e.count - 1}: not ${e.variant}`,
        "variant"
      ))
    case "NoSender":
      return Effect.fail(validationFailed("No sender: set from_email on the campaign or its template", "from_email"))
    case "RecipientSuppressed":
      return Effect.fail(new BadRequestError({
        type: "invalid_request_error",
        code: "recipient_suppressed",
        message: `${e.email} is ${e.reason === "blocked_domain" ? "on a blocked domain" : `suppressed (${e.reason})`}: not sent, not even as a test`,
        param: `to[${e.index}]`
      }))
    default:
      return mailingAnswer(e, "This campaign")
  }
}

/** Starting (send, resume) freezes the audience, which may run past HERALD_LONG_QUERY_TIMEOUT_MS: 422. */
const answerStart = (
  e: Failure | QueryTooExpensive
): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | RateLimitedError | ForbiddenError | UnprocessableError | UnavailableError> =>
  e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e)

export const CampaignsHttpLive = HttpApiBuilder.group(groupApi(CampaignsGroup), "campaigns", (handlers) =>
  Effect.gen(function*() {
    const campaigns = yield* Campaigns
    const control = yield* CampaignControl
    const previews = yield* CampaignPreview
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => campaigns.create(me, payload)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => campaigns.list(me, urlParams.limit, urlParams.offset)).pipe(Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => campaigns.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => campaigns.update(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => campaigns.remove(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("send", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => control.send(me, path.id, payload?.scheduled_at, payload?.allow_partial === true)).pipe(Effect.catchAll(answerStart)))
      .handle("pause", ({ path }) => Effect.flatMap(CurrentKey, (me) => control.pause(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("resume", ({ path }) => Effect.flatMap(CurrentKey, (me) => control.resume(me, path.id)).pipe(Effect.catchAll(answerStart)))
      .handle("unschedule", ({ path }) => Effect.flatMap(CurrentKey, (me) => control.unschedule(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentKey, (me) => control.cancel(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("preview", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => previews.preview(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("testSend", ({ path, payload }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          return yield* previews.send(me, path.id, payload, yield* requestId)
        }).pipe(Effect.catchAll(answer)))
  }))
