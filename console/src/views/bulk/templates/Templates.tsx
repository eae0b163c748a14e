/**
 * Templates (issue 29 view 4): the active key's templates, paged by the API, and the editor of one
 * (`templates/new` for a new one). Bulk templates belong to the key that created them, so the
 * list is asked again when the key switcher changes the active key.
 */
import type { ViewProps } from "../../index.ts"
import { TemplateEditor } from "./TemplateEditor.tsx"
import { TemplateList } from "./TemplateList.tsx"
import "./templates.css"

export const TemplatesView = ({ rest }: ViewProps) => {
  const [first] = rest
  if (first === undefined) return <TemplateList />
  const id = decodeURIComponent(first)
  // A new editor for each template: no draft of one carried over into another.
  return <TemplateEditor key={id} id={id === "new" ? undefined : id} />
}
