/**
 * Failures every bulk group answers alike (templates, lists' confirmation settings, campaigns,
 * sequence steps): content that does not render, and content over the 512 KB bound.
 */
import { Effect } from "effect"
import { BadRequestError, payloadTooLarge } from "../http/errors.ts"
import type { RenderFailed } from "./render/errors.ts"
import { MAX_TEMPLATE_BYTES } from "./templates/fields.ts"

/** 400 `render_failed`, `param` naming the field, the message giving line and column (DESIGN "Errors"). */
export const renderFailedAnswer = (e: RenderFailed) =>
  Effect.fail(new BadRequestError({ type: "invalid_request_error", code: "render_failed", message: e.message, param: e.param }))

/** 413 for `what` ("A template's fields together") holding `bytes`, over MAX_TEMPLATE_BYTES. */
export const contentTooLargeAnswer = (what: string, bytes: number) =>
  Effect.fail(payloadTooLarge(`${what} may hold at most ${MAX_TEMPLATE_BYTES} bytes (512 KB); ${bytes} were given`))
