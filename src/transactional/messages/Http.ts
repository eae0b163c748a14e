import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { MessagesGroup } from "./Api.ts"
import { notFound, RateLimitedError, UnavailableError, UnprocessableError } from "../../http/errors.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import type { ContentNotComposed } from "./content-port.ts"
import { htmlHeaders, withLinksInNewTab } from "./content-html.ts"
import { MessageContent, type TooManyViews } from "./MessageContent.ts"
import { MessageLookup } from "./MessageLookup.ts"

/** A content that was not composed: every renderer busy (503, try again) or the stored message's own failure (422). */
const notComposed = (e: ContentNotComposed) =>
  Effect.fail(
    e.kind === "busy"
      ? new UnavailableError({ type: "api_error", code: "render_busy", message: e.message })
      : new UnprocessableError({ type: "invalid_request_error", code: "content_unavailable", message: `The message cannot be shown: ${e.message}` })
  )

/** The key's views in hand are at their bound: a console shows one message at a time, so one second is enough. */
const tooManyViews = (e: TooManyViews) =>
  Effect.zipRight(
    setResponseHeaders({ "Retry-After": "1" }),
    Effect.fail(
      new RateLimitedError({
        type: "rate_limit_error",
        code: "rate_limit_exceeded",
        message: `This key has ${e.limit} message contents being prepared already; try again when one is answered`
      })
    )
  )

export const MessagesHttpLive = HttpApiBuilder.group(groupApi(MessagesGroup), "messages", (handlers) =>
  Effect.gen(function*() {
    const lookup = yield* MessageLookup
    const contents = yield* MessageContent
    const contentOf = (messageId: string) =>
      Effect.flatMap(CurrentKey, (me) => contents.get({ accountId: me.accountId, keyId: me.keyId }, messageId)).pipe(
        Effect.catchTags({
          ContentNotFound: (e) => Effect.fail(notFound(`No message ${e.id}`)),
          ContentNotComposed: notComposed,
          TooManyViews: tooManyViews,
          SqlError: Effect.die
        })
      )
    return handlers
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => lookup.get(me, path.message_id)).pipe(
          Effect.catchTags({
            MessageNotFound: (e) => Effect.fail(notFound(`No message ${e.id}`)),
            SqlError: Effect.die
          })
        ))
      .handle("content", ({ path }) => contentOf(path.message_id))
      .handle("contentHtml", ({ path, urlParams }) =>
        Effect.flatMap(contentOf(path.message_id), (content) =>
          content.html === null
            ? Effect.fail(notFound(`The message ${path.message_id} has no html part`))
            : Effect.succeed(HttpServerResponse.text(withLinksInNewTab(content.html), {
              contentType: "text/html; charset=utf-8",
              headers: htmlHeaders(urlParams.images === "1")
            }))))
  }))
