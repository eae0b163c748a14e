/**
 * The live preview: the draft rendered by Herald's own engine (POST /v1/bulk/templates/preview,
 * the engine of real sends), asked PREVIEW_DEBOUNCE_MS (useDebounced) after the last keystroke; useLoad drops an
 * answer that arrives after a newer question, so only the newest render is shown. The HTML is
 * shown in a sandboxed srcdoc frame with a policy of its own (preview-document.ts) at a desktop
 * or phone width; remote images only when asked.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { type SampleVars, type TemplateContent, type TemplatePreview, templatesApi } from "../../../api/bulk-templates.ts"
import { ApiError } from "../../../api/client.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import type { Loaded } from "../../../components/use-load.ts"
import { useLoad } from "../../../components/use-load.ts"
import { useDebounced } from "../../../components/use-debounced.ts"
import { previewDocument } from "./preview-document.ts"

/** Frame widths: a desktop mail client's reading pane and a phone. */
const WIDTHS = { desktop: 640, phone: 375 } as const
type FrameWidth = keyof typeof WIDTHS

/** The newest render of `content` with `vars`, asked once the edits pause. */
export const usePreview = (content: TemplateContent, vars: SampleVars, keyId: string): Loaded<TemplatePreview> => {
  // One string for the question: the debounce and the reload compare it, not object identities.
  const question = useDebounced(JSON.stringify({ content, vars }))
  return useLoad(() => {
    const asked = JSON.parse(question) as { content: TemplateContent; vars: SampleVars }
    return templatesApi.preview(asked.content, asked.vars)
  }, [question, keyId])
}

/** The fields the editor shows an error beside; any other refusal is shown where it happened. */
const EDITED_FIELDS = new Set(["subject", "html", "mjml", "body_text"])

/** A refusal as an error about one of the editor's fields, when the API names one. */
export const fieldErrorOf = (error: unknown) =>
  error instanceof ApiError && error.param !== undefined && EDITED_FIELDS.has(error.param)
    ? { param: error.param, message: error.message }
    : undefined

const FrameOptions = ({ images, onImages, onWidth, width }: {
  width: FrameWidth
  onWidth: (width: FrameWidth) => void
  images: boolean
  onImages: (images: boolean) => void
}) => (
  <div class="preview-options">
    <fieldset class="frame-width">
      <legend>Preview width</legend>
      {(Object.keys(WIDTHS) as Array<FrameWidth>).map((option) => (
        <label key={option}>
          <input type="radio" name="frame-width" value={option} checked={width === option} onChange={() => onWidth(option)} />
          {option === "desktop" ? `Desktop (${WIDTHS.desktop} px)` : `Phone (${WIDTHS.phone} px)`}
        </label>
      ))}
    </fieldset>
    <label class="checkbox">
      <input type="checkbox" checked={images} onChange={(event) => onImages(event.currentTarget.checked)} />
      Load remote images (tells their server the mail was opened)
    </label>
  </div>
)

export const PreviewPane = ({ preview }: { preview: Loaded<TemplatePreview> }) => {
  const [width, setWidth] = useState<FrameWidth>("desktop")
  const [images, setImages] = useState(false)
  // While the engine refuses the content, the last render it made stays in view.
  const lastGood = useRef<TemplatePreview | undefined>(undefined)
  if (preview.data !== undefined) lastGood.current = preview.data
  const shown = lastGood.current
  return (
    <section class="preview" aria-labelledby="preview-heading" aria-busy={preview.loading}>
      <h2 id="preview-heading">Preview</h2>
      <FrameOptions width={width} onWidth={setWidth} images={images} onImages={setImages} />
      {preview.error === undefined ? null : (
        <div class="preview-error">
          <p>The engine refused this content; the preview shows the last content it rendered.</p>
          {fieldErrorOf(preview.error) === undefined ? <ErrorMessage error={preview.error} /> : <p>See the message beside the field it names.</p>}
        </div>
      )}
      {preview.loading && shown === undefined ? <p role="status">Rendering…</p> : null}
      {shown === undefined ? null : (
        <>
          <p class="preview-subject"><strong>Subject:</strong> <span id="preview-subject">{shown.subject === "" ? "(no subject)" : shown.subject}</span></p>
          <p class="preview-vars">
            {shown.variables.length === 0 ? "The content reads no variables." : `Reads: ${shown.variables.join(", ")}.`}
            {shown.missing.length === 0 ? null : <strong class="missing"> Not in the sample (rendered empty): {shown.missing.join(", ")}.</strong>}
          </p>
          <div class="frame-box">
            <iframe
              class="template-preview"
              title="Preview of the template's HTML"
              sandbox=""
              referrerpolicy="no-referrer"
              style={{ width: `${WIDTHS[width]}px` }}
              srcdoc={previewDocument(shown.html, images)}
            />
          </div>
          <h3 id="preview-text-heading">Text part</h3>
          <pre class="preview-text" tabIndex={0} aria-labelledby="preview-text-heading">{shown.body_text}</pre>
        </>
      )}
    </section>
  )
}
