/**
 * /v1/bulk/settings: the calling key's bulk settings (issue 30 item 9) — the postal address every
 * campaign and sequence step must carry (CAN-SPAM) and the footer that shows it with the
 * unsubscribe link in content that has no `{{ unsubscribe_url }}` of its own.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { BadRequest } from "../../http/errors.ts"
import { boundedText } from "../../http/bounds.ts"

/** A postal address of several lines: room for any country's form, well short of a letter. */
export const MAX_POSTAL_ADDRESS_LENGTH = 500
/** A footer's source: a few paragraphs and links with inline style, not a second message. */
export const MAX_FOOTER_LENGTH = 16_384

const Footer = Schema.NullOr(boundedText(MAX_FOOTER_LENGTH))

const Settings = Schema.Struct({
  postal_address: Schema.NullOr(Schema.String).annotations({ description: "Null until set: campaigns do not start and sequence steps hold without it" }),
  footer_html: Schema.NullOr(Schema.String).annotations({ description: "The footer's html source (an engine template); null: the default footer" }),
  footer_text: Schema.NullOr(Schema.String).annotations({ description: "The footer's text source (an engine template); null: the default footer" }),
  updated_at: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "BulkSettings",
  examples: [{
    postal_address: "Example Ltd, 1 High Street, Bristol BS1 4DJ, United Kingdom",
    footer_html: "<p style=\"font-size:12px\">{{ postal_address }} · <a href=\"{{ unsubscribe_url }}\">Unsubscribe</a></p>",
    footer_text: null,
    updated_at: "2026-11-28T09:30:00.000Z"
  }]
})

const SettingsPut = Schema.Struct({
  postal_address: boundedText(MAX_POSTAL_ADDRESS_LENGTH, { trim: true, minLength: 1 }),
  footer_html: Schema.optional(Footer),
  footer_text: Schema.optional(Footer)
}).annotations({
  identifier: "BulkSettingsPut",
  examples: [{
    postal_address: "Example Ltd, 1 High Street, Bristol BS1 4DJ, United Kingdom",
    footer_html: "<p style=\"font-size:12px\">{{ postal_address }} · <a href=\"{{ unsubscribe_url }}\">Unsubscribe</a></p>"
  }]
})

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/settings").addSuccess(Settings)
      .annotate(OpenApi.Summary, "The key's postal address and footer (nulls until set)")
      .annotate(OpenApi.Description, "Campaign and sequence step content without `{{ unsubscribe_url }}` gets the footer at render time "
        + "(before `</body>` in html, at the end of the text, each part on its own, its links untracked). No errors of its own.")
  )
  .add(
    HttpApiEndpoint.put("write", "/v1/bulk/settings").setPayload(SettingsPut).addSuccess(Settings)
      .annotate(OpenApi.Summary, "Set the key's postal address and, optionally, its footer's html and text sources")
      .annotate(OpenApi.Description, "Replaces the settings: an omitted or null footer field is the default footer. `footer_html` and "
        + "`footer_text` are engine templates (`{{ postal_address }}`, `{{ unsubscribe_url }}`, the contact's variables). Errors: 400 "
        + "`validation_failed` (`param` names the field: empty address, a field over its bound), 400 `render_failed` with `param: "
        + "footer_html` or `footer_text` when a footer does not compile. Without a postal address a campaign's `send` → 400 "
        + "`validation_failed` with `param: postal_address`, a scheduled campaign pauses when due with `pause_reason: "
        + "postal_address_missing`, and a due sequence step holds with `hold_reason: postal_address_missing`.")
  )
  .addError(BadRequest)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Settings")
{}
