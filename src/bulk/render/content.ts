/**
 * A message's content as the bulk features hold it — subject, html, text part, preheader — made
 * ready once (`prepareContent`: parsed, the preheader placed, the text part generated when absent)
 * and rendered per contact (`renderContent`). Campaigns, sequence steps, confirmation mail,
 * previews and test-sends all go through these two functions, so a 100,000-contact campaign parses
 * its content once and renders it 100,000 times.
 *
 * Variables: the contact's fields (`email`, `name`, `metadata.*`), the content's `vars` (default
 * values; a contact's field wins over a var of the same name), and in bulk messages
 * `unsubscribe_url`. A variable the scope does not give renders empty and is listed in `missing`.
 */
import * as Either from "effect/Either" // the module alone: a render worker loads no more of Effect than it uses
import type { CompiledField, RenderEngineShape, Scope } from "./engine.ts"
import type { RenderFailed } from "./errors.ts"
import { textFromHtml, withPreheader } from "./text.ts"

export interface ContentSource {
  readonly subject: string
  /** Empty: a text-only message. */
  readonly html: string
  /** Empty: generated from the html. */
  readonly body_text: string
  readonly preheader?: string | null | undefined
}

export interface PreparedContent {
  readonly subject: CompiledField
  readonly html: CompiledField | null
  readonly text: CompiledField
  /** Every variable the content reads, each once, sorted. */
  readonly variables: ReadonlyArray<string>
}

export interface RenderedContent {
  readonly subject: string
  /** Null when the content has no html part. */
  readonly html: string | null
  readonly text: string
  /** Variables the content reads that the scope did not give (rendered empty), sorted. */
  readonly missing: ReadonlyArray<string>
}

export interface Contact {
  readonly email?: string | undefined
  readonly name?: string | null | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

/** The variables of one contact's render. */
export const contactScope = (vars: Scope, contact: Contact, unsubscribeUrl?: string): Scope => ({
  ...vars,
  ...(contact.email === undefined ? {} : { email: contact.email }),
  ...(contact.name === undefined || contact.name === null ? {} : { name: contact.name }),
  ...(contact.metadata === undefined ? {} : { metadata: contact.metadata }),
  ...(unsubscribeUrl === undefined ? {} : { unsubscribe_url: unsubscribeUrl })
})

export const prepareContent = (engine: RenderEngineShape, source: ContentSource): Either.Either<PreparedContent, RenderFailed> =>
  Either.gen(function*() {
    const subject = yield* engine.compile("text", source.subject, "subject")
    // The preheader is checked on its own first, so its errors name it rather than the html.
    if (source.preheader) yield* engine.compile("html", source.preheader, "preheader")
    const html = source.html === "" ? null : yield* engine.compile("html", withPreheader(source.html, source.preheader), "html")
    const text = source.body_text !== "" || source.html === ""
      ? yield* engine.compile("text", source.body_text, "body_text")
      : yield* engine.compile("text", textFromHtml(source.html), "body_text")
    const variables = [...new Set([...subject.variables, ...(html?.variables ?? []), ...text.variables])].sort()
    return { subject, html, text, variables }
  })

export const renderContent = (engine: RenderEngineShape, prepared: PreparedContent, scope: Scope): Either.Either<RenderedContent, RenderFailed> =>
  Either.gen(function*() {
    const subject = yield* engine.render(prepared.subject, scope, "subject")
    const html = prepared.html === null ? null : yield* engine.render(prepared.html, scope, "html")
    const text = yield* engine.render(prepared.text, scope, "body_text")
    const missing = new Set([
      ...engine.missing(prepared.subject, scope),
      ...(prepared.html === null ? [] : engine.missing(prepared.html, scope)),
      ...engine.missing(prepared.text, scope)
    ])
    return { subject, html, text, missing: [...missing].sort() }
  })
