/**
 * The template's three sources — HTML, MJML and text — side by side on a wide screen and as tabs
 * at 390 px (styles in templates.css; the same panels, only the tabs' visibility differs). An
 * error of the engine (the preview's or a save's `render_failed`) is shown in the panel of the
 * field it names, at its line: the line number marked in the gutter, the line itself quoted under
 * the field with the message, and a button that selects it in the editor.
 */
import { useRef, useState } from "preact/hooks"
import { positionOf, rangeOfLine } from "./preview-document.ts"
import type { Draft } from "./draft.ts"

export type SourceField = "html" | "mjml" | "body_text"

const SOURCES: ReadonlyArray<{ field: SourceField; title: string; hint: string }> = [
  { field: "html", title: "HTML", hint: "Liquid variables such as {{ first_name }}. Compiled from MJML on save when MJML is given." },
  { field: "mjml", title: "MJML", hint: "Optional: when given, the HTML is compiled from it." },
  { field: "body_text", title: "Text", hint: "The plain-text part." }
]

/** An error of the API about one field: its message (which carries the line, when known). */
export interface FieldError {
  readonly param: string
  readonly message: string
}

const LineError = ({ error, id, onShow, source }: { error: FieldError; id: string; source: string; onShow: (line: number) => void }) => {
  const position = positionOf(error.message)
  const text = position === undefined ? undefined : source.split("\n")[position.line - 1]
  return (
    <div class="line-error" id={id} role="alert">
      <p class="error">{error.message}</p>
      {position === undefined || text === undefined
        ? null
        : (
          <p class="error-line">
            <span>Line {position.line}{position.column === null ? "" : `, column ${position.column}`}: </span>
            <code>{text}</code>{" "}
            <button type="button" class="secondary" onClick={() => onShow(position.line)}>Show line {position.line}</button>
          </p>
        )}
    </div>
  )
}

const Gutter = ({ errorLine, lines, scrollTop }: { lines: number; errorLine: number | undefined; scrollTop: number }) => (
  <div class="gutter" aria-hidden="true">
    <div style={{ transform: `translateY(${-scrollTop}px)` }}>
      {Array.from({ length: Math.max(lines, 1) }, (_, i) => (
        <div key={i} class={errorLine === i + 1 ? "gutter-error" : undefined}>{i + 1}</div>
      ))}
    </div>
  </div>
)

const SourcePanel = ({ active, error, field, hint, onValue, title, value }: {
  field: SourceField
  title: string
  hint: string
  value: string
  active: boolean
  error: FieldError | undefined
  onValue: (value: string) => void
}) => {
  const area = useRef<HTMLTextAreaElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const id = `source-${field}`
  const errorId = `${id}-error`
  const show = (line: number) => {
    const range = rangeOfLine(value, line)
    if (area.current === null || range === undefined) return
    area.current.focus()
    area.current.setSelectionRange(range.start, range.end)
  }
  return (
    <div class={active ? "source-panel active" : "source-panel"} id={`${id}-panel`} role="tabpanel" aria-labelledby={`${id}-tab`}>
      <label for={id}>{title}</label>
      <p class="hint" id={`${id}-hint`}>{hint}</p>
      <div class="code-area">
        <Gutter lines={value.split("\n").length} errorLine={error === undefined ? undefined : positionOf(error.message)?.line} scrollTop={scrollTop} />
        <textarea
          id={id}
          ref={area}
          value={value}
          wrap="off"
          spellcheck={false}
          rows={16}
          aria-invalid={error === undefined ? undefined : true}
          aria-describedby={error === undefined ? `${id}-hint` : `${id}-hint ${errorId}`}
          onInput={(event) => onValue(event.currentTarget.value)}
          onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}
        />
      </div>
      {error === undefined ? null : <LineError error={error} id={errorId} source={value} onShow={show} />}
    </div>
  )
}

export const SourceEditors = ({ draft, error, onValue }: {
  draft: Draft
  error: FieldError | undefined
  onValue: (field: SourceField, value: string) => void
}) => {
  const [active, setActive] = useState<SourceField>("html")
  const move = (event: KeyboardEvent, index: number) => {
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0
    if (step === 0) return
    const next = SOURCES[(index + step + SOURCES.length) % SOURCES.length]!
    setActive(next.field)
    document.getElementById(`source-${next.field}-tab`)?.focus()
  }
  return (
    <div class="sources">
      <div class="source-tabs" role="tablist" aria-label="Template sources">
        {SOURCES.map((source, index) => (
          <button
            key={source.field}
            type="button"
            role="tab"
            id={`source-${source.field}-tab`}
            aria-selected={active === source.field}
            aria-controls={`source-${source.field}-panel`}
            tabIndex={active === source.field ? 0 : -1}
            class={active === source.field ? "tab active" : "tab"}
            onClick={() => setActive(source.field)}
            onKeyDown={(event) => move(event, index)}
          >
            {source.title}{error?.param === source.field ? " (error)" : ""}
          </button>
        ))}
      </div>
      <div class="source-panels">
        {SOURCES.map((source) => (
          <SourcePanel
            key={source.field}
            {...source}
            value={draft[source.field]}
            active={active === source.field}
            error={error?.param === source.field ? error : undefined}
            onValue={(value) => onValue(source.field, value)}
          />
        ))}
      </div>
    </div>
  )
}
