/**
 * MJML to html, once, when content is saved (never per recipient): `mjml-core` with its preset of
 * standard components (not the `mjml` package, whose command-line tool brings file watchers and
 * more). `{{ }}` placeholders pass through text and attribute values untouched, so the compiled
 * html is still a Liquid template. Validation is strict: an error is reported (400
 * `render_failed`, `param: mjml`, with its line), never swallowed. `mj-include` is refused before
 * compiling (and `ignoreIncludes` is set as well): no template may read the server's files.
 *
 * Compiling runs in a render worker (src/bulk/render/tasks.ts) under its deadline. Its cost and its
 * output grow with the number of MJML elements, not with bytes: 503 KB of empty `<mj-section>`s
 * compiled for 3.6 s into 13.5 MB of html (no template may hold more than 512 KB of it). So the
 * elements are counted before any work (`mjmlInputProblem`, a scan of the source).
 */
import * as Either from "effect/Either" // the module alone: a render worker loads no more of Effect than it uses
import type mjmlCore from "mjml-core"
import { commonJsExports } from "../../lib/commonjs.ts"
import { RenderFailed } from "./errors.ts"

/**
 * MJML elements one source may hold. A long newsletter has a few hundred (each section, column,
 * text, image, button is one); 2,000 compile in about 0.3 s, and even empty sections at that count
 * make more html than a template may hold.
 */
export const MAX_MJML_ELEMENTS = 2_000

/**
 * Loaded at the first compile, not when a render worker starts: MJML is most of a worker's start-up
 * (seconds on a loaded machine), and a worker replaced after a deadline should be back soon.
 */
let compiler: Promise<{ readonly mjml2html: typeof mjmlCore; readonly preset: unknown }> | undefined
const loadCompiler = () =>
  (compiler ??= Promise.all([import("mjml-core"), import("mjml-preset-core")]).then(([core, preset]) => ({
    mjml2html: commonJsExports(core.default),
    preset: commonJsExports(preset.default)
  })))

const INCLUDE = /<mj-include\b/i
const ELEMENT = /<mj-[a-z]/gi

const lineOf = (source: string, index: number) => source.slice(0, index).split("\n").length

const failed = (message: string, line: number | null) =>
  new RenderFailed({ param: "mjml", line, column: null, message: `mjml cannot be compiled${line === null ? "" : ` at line ${line}`}: ${message}` })

/** Why `source` is refused before compiling (an include, too many elements), or null. */
export const mjmlInputProblem = (source: string): RenderFailed | null => {
  const include = INCLUDE.exec(source)
  if (include !== null) return failed("mj-include is not allowed: a template cannot read files", lineOf(source, include.index))
  let elements = 0
  ELEMENT.lastIndex = 0
  while (ELEMENT.exec(source) !== null) {
    if (++elements > MAX_MJML_ELEMENTS) {
      return new RenderFailed({
        param: "mjml",
        line: null,
        column: null,
        overBound: true,
        message: `mjml may hold at most ${MAX_MJML_ELEMENTS} elements (<mj-…> tags); this one holds more`
      })
    }
  }
  return null
}

/** The compiled html, or why not (in the worker: the caller checked `mjmlInputProblem` already, checked again here). */
export const compileMjmlSource = async (source: string): Promise<Either.Either<string, RenderFailed>> => {
  const problem = mjmlInputProblem(source)
  if (problem !== null) return Either.left(problem)
  try {
    const { mjml2html, preset } = await loadCompiler()
    const result = await mjml2html(source, { presets: [preset], validationLevel: "strict", ignoreIncludes: true, keepComments: false })
    const first = result.errors[0]
    if (first !== undefined) return Either.left(failed(result.errors.map((e) => `line ${e.line}: ${e.message}`).join("; "), first.line))
    if (!/<mj-body\b/i.test(source)) return Either.left(failed("an mjml document needs <mjml><mj-body>…</mj-body></mjml>", null))
    return Either.right(result.html)
  } catch (error) {
    // Messages are built from the errors' line and text, not `formattedMessage`, which names the
    // server's working directory.
    const errors = (error as { readonly errors?: ReadonlyArray<{ readonly line: number; readonly message: string }> }).errors
    const first = errors?.[0]
    return Either.left(
      first !== undefined
        ? failed(errors!.map((e) => `line ${e.line}: ${e.message}`).join("; "), first.line)
        : failed(error instanceof Error ? error.message : String(error), null)
    )
  }
}
