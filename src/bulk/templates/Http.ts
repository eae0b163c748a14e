import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { groupApi } from "../../http/group-api.ts"
import { TemplatesGroup } from "./Api.ts"
import { contentTooLargeAnswer, mailingAnswer, type MailingFailure } from "../http-answers.ts"
import { CurrentKey } from "../../http/auth.ts"
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
  validationFailed,
  type UnavailableError
} from "../../http/errors.ts"
import { requestId } from "../../http/request-context.ts"
import { contactScope } from "../render/content.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import { readyToSave, type TemplateTooLarge } from "./fields.ts"
import { type NoSender, type RecipientSuppressed, TestSend } from "./TestSend.ts"
import { type HtmlFromMjml, type TemplateInUse, type TemplateNotFound, Templates, type VersionNotFound } from "./Templates.ts"

const badRequest = (code: string, message: string, param?: string) =>
  new BadRequestError({ type: "invalid_request_error", code, message, param })

type Failure =
  | TemplateNotFound
  | VersionNotFound
  | TemplateInUse
  | HtmlFromMjml
  | TemplateTooLarge
  | NoSender
  | RecipientSuppressed
  | MailingFailure

/** Every failure of this group as the API's envelope (SQL errors are defects: 500). */
const answer = (e: Failure): Effect.Effect<never, NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | RateLimitedError | ForbiddenError | UnavailableError> => {
  switch (e._tag) {
    case "TemplateNotFound":
      return Effect.fail(notFound(`No template ${e.id}`))
    case "VersionNotFound":
      return Effect.fail(notFound(`Template ${e.id} has no version ${e.version}`))
    case "TemplateInUse":
      return Effect.fail(conflict(`Template ${e.id} is in use: ${e.users.join(", ")}`))
    case "HtmlFromMjml":
      return Effect.fail(validationFailed("This template's html is compiled from its mjml: change the mjml, or send mjml: null with the html", "html"))
    case "TemplateTooLarge":
      return contentTooLargeAnswer("A template's fields together", e.bytes)
    case "NoSender":
      return Effect.fail(validationFailed("No sender: give from_email, or set the template's from_email", "from_email"))
    case "RecipientSuppressed":
      return Effect.fail(badRequest(
        "recipient_suppressed",
        e.reason === "blocked_domain"
          ? `${e.email} is on a blocked domain: not sent, not even as a test`
          : `${e.email} is suppressed (${e.reason}): not sent, not even as a test`,
        "to_email"
      ))
    default:
      return mailingAnswer(e, "This test-send")
  }
}

export const TemplatesHttpLive = HttpApiBuilder.group(groupApi(TemplatesGroup), "templates", (handlers) =>
  Effect.gen(function*() {
    const templates = yield* Templates
    const testSend = yield* TestSend
    const engine = yield* RenderEngine

    const preview = (accountId: string, payload: {
      readonly subject: string
      readonly html: string
      readonly body_text: string
      readonly vars: Readonly<Record<string, unknown>>
      readonly mjml?: string | null | undefined
      readonly preheader?: string | null | undefined
    }) =>
      Effect.gen(function*() {
        const ready = yield* readyToSave(engine, accountId, {
          name: "",
          subject: payload.subject,
          html: payload.html,
          body_text: payload.body_text,
          mjml: payload.mjml ?? null,
          preheader: payload.preheader ?? null,
          vars: payload.vars,
          from_email: null,
          from_name: null,
          reply_to: null
        })
        const rendered = yield* engine.render(accountId, ready, contactScope(payload.vars, {}))
        return {
          subject: rendered.subject,
          html: rendered.html ?? "",
          body_text: rendered.text,
          vars: payload.vars,
          variables: rendered.variables,
          missing: rendered.missing
        }
      })

    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => templates.create(me, payload)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => templates.list(me, urlParams.limit, urlParams.offset)).pipe(Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })))
      .handle("preview", ({ payload }) => Effect.flatMap(CurrentKey, (me) => preview(me.accountId, payload)).pipe(Effect.catchAll(answer)))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => templates.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => templates.update(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => templates.remove(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("versions", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => templates.versions(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("version", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => templates.version(me, path.id, path.vid)).pipe(
          Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die, TemplateNotFound: answer, VersionNotFound: answer })
        ))
      .handle("restore", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => templates.restore(me, path.id, path.vid)).pipe(Effect.catchAll(answer)))
      .handle("testSend", ({ path, payload }) =>
        Effect.gen(function*() {
          const me = yield* CurrentKey
          return yield* testSend.send(me, path.id, payload, yield* requestId)
        }).pipe(Effect.catchAll(answer)))
  }))
