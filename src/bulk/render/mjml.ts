/**
 * MJML to html, once, when content is saved (never per recipient): `mjml-core` with its preset of
 * standard components (not the `mjml` package, whose command-line tool brings file watchers and
 * more). `{{ }}` placeholders pass through text and attribute values untouched, so the compiled
 * html is still a Liquid template. Validation is strict: an error is reported (400
 * `render_failed`, `param: mjml`, with its line), never swallowed. `mj-include` is refused before
 * compiling (and `ignoreIncludes` is set as well): no template may read the server's files.
 */
import { Effect } from "effect"
import mjmlCore from "mjml-core"
import presetCore from "mjml-preset-core"
import { RenderFailed } from "./errors.ts"

/** The packages are CommonJS: under Node's ESM loader their default export is the module object. */
const interop = <A>(module: A): A => (module as { readonly default?: A }).default ?? module
const mjml2html = interop(mjmlCore)
const preset = interop(presetCore)

const INCLUDE = /<mj-include\b/i

const lineOf = (source: string, index: number) => source.slice(0, index).split("\n").length

const failed = (message: string, line: number | null) =>
  new RenderFailed({ param: "mjml", line, column: null, message: `mjml cannot be compiled${line === null ? "" : ` at line ${line}`}: ${message}` })

export const compileMjml = (source: string): Effect.Effect<string, RenderFailed> =>
  Effect.gen(function*() {
    const include = INCLUDE.exec(source)
    if (include !== null) {
      return yield* failed("mj-include is not allowed: a template cannot read files", lineOf(source, include.index))
    }
    const result = yield* Effect.tryPromise({
      try: () =>
        mjml2html(source, {
          presets: [preset],
          validationLevel: "strict",
          ignoreIncludes: true,
          keepComments: false
        }),
      // Messages are built from the errors' line and text, not `formattedMessage`, which names
      // the server's working directory.
      catch: (error) => {
        const errors = (error as { readonly errors?: ReadonlyArray<{ readonly line: number; readonly message: string }> }).errors
        const first = errors?.[0]
        return first !== undefined
          ? failed(errors!.map((e) => `line ${e.line}: ${e.message}`).join("; "), first.line)
          : failed(error instanceof Error ? error.message : String(error), null)
      }
    })
    const first = result.errors[0]
    if (first !== undefined) return yield* failed(result.errors.map((e) => `line ${e.line}: ${e.message}`).join("; "), first.line)
    if (!/<mj-body\b/i.test(source)) return yield* failed("an mjml document needs <mjml><mj-body>…</mj-body></mjml>", null)
    return result.html
  })
