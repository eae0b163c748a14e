/**
 * What a render worker does (src/bulk/render/render-worker.ts), as plain data in and out, so the
 * same function runs in the worker and, when no worker can be started, in the main thread.
 *
 * - `content`: a message's content (ContentSource) is prepared once per worker and kept by its key
 *   (a digest the caller computes); a task may omit the source, and the worker answers `unknown`
 *   when it does not hold the key, so a campaign's per-recipient task carries the key and the
 *   contact's variables only. `scope` null checks the content (answers its variables); a scope
 *   renders it.
 * - `fields`: a few named fields rendered in order, each one's result a variable of the next
 *   (the confirmation mail's intro inside its frame); `scope` null only checks them.
 * - `mjml`: MJML compiled to html.
 * - `view`: a stored message composed as it was sent and read back (message-view.ts), for
 *   GET /v1/mail/messages/{id}/content; its modules (nodemailer's composer, mailparser) are loaded
 *   at a worker's first view, not by every render worker at start.
 *
 * Failures of the content are answers (`failed`, a RenderFailed's fields); what throws here is a
 * defect of the task itself.
 */
import * as Either from "effect/Either" // the module alone: a render worker loads no more of Effect than it uses
import { type ContentSource, prepareContent, type PreparedContent, type RenderedContent, renderContent } from "./content.ts"
import { type EngineLimits, makeRenderEngine, type RenderMode, type Scope } from "./engine.ts"
import { RenderFailed } from "./errors.ts"
import type { ViewedMessage, ViewTask } from "./message-view.ts"
import { compileMjmlSource } from "./mjml.ts"

export interface FieldSource {
  /** The variable its result becomes for the fields after it, and its key in the answer. */
  readonly name: string
  readonly mode: RenderMode
  readonly source: string
  /** The API field named in errors. */
  readonly param: string
}

export type RenderTask =
  | { readonly op: "content"; readonly key: string; readonly content?: ContentSource | undefined; readonly scope: Scope | null }
  | { readonly op: "fields"; readonly fields: ReadonlyArray<FieldSource>; readonly scope: Scope | null }
  | { readonly op: "mjml"; readonly source: string }
  | ViewTask

export interface FailedFields {
  readonly param: string
  readonly message: string
  readonly line: number | null
  readonly column: number | null
  readonly outOfTime?: boolean | undefined
}

export type RenderAnswer =
  | { readonly _tag: "checked"; readonly variables: ReadonlyArray<string> }
  | { readonly _tag: "rendered"; readonly rendered: RenderedContent; readonly variables: ReadonlyArray<string> }
  | { readonly _tag: "fields"; readonly values: Readonly<Record<string, string>> }
  | { readonly _tag: "mjml"; readonly html: string }
  | { readonly _tag: "view"; readonly view: ViewedMessage }
  | { readonly _tag: "failed"; readonly error: FailedFields }
  | { readonly _tag: "unknown" }

/** Prepared contents a worker keeps, by key (least recently used first out), and their source characters at most. */
const CONTENTS_KEPT = 256
const CONTENT_CHARACTERS_KEPT = 48 * 1024 * 1024

const sourceLength = (c: ContentSource) => c.subject.length + c.html.length + c.body_text.length + (c.preheader?.length ?? 0)

const failedAnswer = (e: RenderFailed): RenderAnswer => ({
  _tag: "failed",
  error: { param: e.param, message: e.message, line: e.line, column: e.column, outOfTime: e.outOfTime }
})

/** A stored message composed and read back; a message that cannot be composed is an answer, like a content's failure. */
const runView = async (task: ViewTask): Promise<RenderAnswer> => {
  const { viewMessage } = await import("./message-view.ts")
  try {
    return { _tag: "view", view: await viewMessage(task) }
  } catch (error) {
    const message = `the message cannot be composed: ${error instanceof Error ? error.message : String(error)}`
    return { _tag: "failed", error: { param: "content", message, line: null, column: null } }
  }
}

/** A task runner with its own engine and cache: one per worker (and one for the main-thread fallback). */
export const makeTaskRunner = (limits?: EngineLimits) => {
  const engine = makeRenderEngine(limits)
  const contents = new Map<string, { readonly prepared: Either.Either<PreparedContent, RenderFailed>; readonly size: number }>()
  let characters = 0

  const preparedOf = (key: string, content: ContentSource | undefined) => {
    const hit = contents.get(key)
    if (hit !== undefined) {
      contents.delete(key)
      contents.set(key, hit)
      return hit.prepared
    }
    if (content === undefined) return undefined
    const entry = { prepared: prepareContent(engine, content), size: sourceLength(content) }
    contents.set(key, entry)
    characters += entry.size
    for (const [oldest, old] of contents) {
      if (contents.size <= CONTENTS_KEPT && characters <= CONTENT_CHARACTERS_KEPT) break
      contents.delete(oldest)
      characters -= old.size
    }
    return entry.prepared
  }

  const runContent = (task: Extract<RenderTask, { op: "content" }>): RenderAnswer => {
    const prepared = preparedOf(task.key, task.content)
    if (prepared === undefined) return { _tag: "unknown" }
    if (Either.isLeft(prepared)) return failedAnswer(prepared.left)
    if (task.scope === null) return { _tag: "checked", variables: prepared.right.variables }
    const rendered = renderContent(engine, prepared.right, task.scope)
    return Either.isLeft(rendered) ? failedAnswer(rendered.left) : { _tag: "rendered", rendered: rendered.right, variables: prepared.right.variables }
  }

  const runFields = (task: Extract<RenderTask, { op: "fields" }>): RenderAnswer => {
    const values: Record<string, string> = {}
    let scope: Scope = task.scope ?? {}
    for (const field of task.fields) {
      const compiled = engine.compile(field.mode, field.source, field.param)
      if (Either.isLeft(compiled)) return failedAnswer(compiled.left)
      if (task.scope === null) continue
      const value = engine.render(compiled.right, scope, field.param)
      if (Either.isLeft(value)) return failedAnswer(value.left)
      values[field.name] = value.right
      scope = { ...scope, [field.name]: value.right }
    }
    return { _tag: "fields", values }
  }

  return async (task: RenderTask): Promise<RenderAnswer> => {
    switch (task.op) {
      case "content":
        return runContent(task)
      case "fields":
        return runFields(task)
      case "mjml": {
        const html = await compileMjmlSource(task.source)
        return Either.isLeft(html) ? failedAnswer(html.left) : { _tag: "mjml", html: html.right }
      }
      case "view":
        return runView(task)
    }
  }
}
