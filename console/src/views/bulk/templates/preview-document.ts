/**
 * The preview frame's document and the engine's error positions: pure functions, no Preact.
 *
 * The rendered HTML goes into `<iframe sandbox srcdoc>` (no allow-scripts, no allow-same-origin:
 * a script in tenant HTML never runs and the frame can never reach the console), preceded by a
 * CSP of its own: nothing loads but inline styles and `data:` images until the person asks for
 * remote images (a remote image tells its sender the mail was read, and an editor's preview should
 * not be fetching a tracker at every keystroke). The meta element goes first in the document
 * (after a doctype, so the document keeps its mode), before anything that could load.
 *
 * A srcdoc document also inherits the console's own CSP (src/api/console/headers.ts); both apply.
 */

/** The frame's policy; `images`: remote images allowed too. */
export const previewPolicy = (images: boolean): string =>
  `default-src 'none'; style-src 'unsafe-inline'; img-src data:${images ? " https: http:" : ""}`

/** Comments and a doctype that may open the document: the meta element goes after them. */
const PROLOGUE = /^\uFEFF?(?:\s|<!--[\s\S]*?-->)*(?:<!doctype[^>]*>)?/i

const escapeAttribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;")

/** `html` as the frame's srcdoc: the policy's meta element first. */
export const previewDocument = (html: string, images: boolean): string => {
  const prologue = PROLOGUE.exec(html)?.[0] ?? ""
  const at = /<!doctype/i.test(prologue) ? prologue.length : 0
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(previewPolicy(images))}">`
  return html.slice(0, at) + meta + html.slice(at)
}

export interface ErrorPosition {
  readonly line: number
  readonly column: number | null
}

/**
 * Where the engine's error is. The API's `render_failed` envelope names the field (`param`) but
 * carries the position only in its message ("html cannot be rendered at line 3, column 7: …",
 * "mjml cannot be compiled at line 4: …"), so it is read from there.
 */
export const positionOf = (message: string): ErrorPosition | undefined => {
  const found = /\bat line (\d+)(?:, column (\d+))?/.exec(message) ?? /\bline (\d+)\b/.exec(message)
  if (found === null) return undefined
  return { line: Number(found[1]), column: found[2] === undefined ? null : Number(found[2]) }
}

/** The 0-based character range of `line` (1-based) in `source`, to select it in the textarea. */
export const rangeOfLine = (source: string, line: number): { start: number; end: number } | undefined => {
  const lines = source.split("\n")
  if (line < 1 || line > lines.length) return undefined
  const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0)
  return { start, end: start + lines[line - 1]!.length }
}
