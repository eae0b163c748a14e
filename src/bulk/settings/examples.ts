/** The reference's examples and errors for /v1/bulk/settings (src/api/docs/reference.ts gathers them). */
import type { GroupReference } from "../../http/reference.ts"
import type { SettingsGroup } from "./Api.ts"

const ADDRESS = "Example Ltd, 1 High Street, Bristol BS1 4DJ, United Kingdom"
const FOOTER_HTML = "<p style=\"font-size:12px\">{{ postal_address }} · <a href=\"{{ unsubscribe_url }}\">Unsubscribe</a></p>"
const settings = { postal_address: ADDRESS, footer_html: FOOTER_HTML, footer_text: null, updated_at: "2026-11-28T09:30:00.000Z" }

export const settingsReference: GroupReference<typeof SettingsGroup> = {
  read: { errors: "No errors of its own.", response: settings },
  write: {
    errors: "400 `validation_failed` (param names the field) for an empty address or a field over its bound; 400 `render_failed` "
      + "(param `footer_html` or `footer_text`) for a footer that does not compile.",
    request: { postal_address: ADDRESS, footer_html: FOOTER_HTML },
    response: settings
  }
}
