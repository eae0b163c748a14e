/**
 * What a template holds, and the rules every save applies (create, update, restore): MJML
 * compiled into html (once, here), every field parsed by the rendering engine so a broken template
 * is refused when saved rather than when sent, and the 512 KB bound on all fields together.
 */
import { Data, Effect } from "effect"
import type { RenderEngineShape } from "../render/RenderEngine.ts"

export const MAX_TEMPLATE_BYTES = 512 * 1024

/**
 * What a bulk message is made of, wherever it comes from: a template, a campaign's own fields or a
 * step's (their own fields win over their template's), ready to render per contact.
 */
export interface MessageContent {
  readonly subject: string
  readonly html: string
  readonly body_text: string
  readonly preheader: string | null
  readonly vars: Readonly<Record<string, unknown>>
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
}

export interface TemplateFields extends MessageContent {
  readonly name: string
  readonly mjml: string | null
}

export class TemplateTooLarge extends Data.TaggedError("TemplateTooLarge")<{ readonly bytes: number }> {}

/** The bytes of every field together, as stored (vars as JSON). */
export const templateBytes = (f: TemplateFields): number =>
  [f.name, f.subject, f.html, f.body_text, f.mjml ?? "", f.preheader ?? "", f.from_email ?? "", f.from_name ?? "", f.reply_to ?? ""]
    .reduce((n, s) => n + Buffer.byteLength(s), Buffer.byteLength(JSON.stringify(f.vars)))

/**
 * The fields as they will be stored: html compiled from mjml when there is mjml, everything parsed
 * (both in a render worker, under its deadline, counted against `accountId`'s share).
 */
export const readyToSave = (engine: RenderEngineShape, accountId: string, fields: TemplateFields) =>
  Effect.gen(function*() {
    // Checked before compiling as well: MJML is not compiled for an oversized body.
    const before = templateBytes(fields)
    if (before > MAX_TEMPLATE_BYTES) return yield* new TemplateTooLarge({ bytes: before })
    const html = fields.mjml === null ? fields.html : yield* engine.mjml(accountId, fields.mjml)
    const ready = { ...fields, html }
    const bytes = templateBytes(ready)
    if (bytes > MAX_TEMPLATE_BYTES) return yield* new TemplateTooLarge({ bytes })
    yield* engine.check(accountId, ready)
    return ready
  })
