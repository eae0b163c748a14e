/**
 * /v1/bulk/templates: templates of the calling key (REST conventions of shared/DESIGN.md "Rules
 * shared by the bulk issues"), their versions, a preview that saves nothing, and a test-send.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, Forbidden, NotFound, RateLimited } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { storable, StorableString } from "../../lib/text.ts"

const Name = storable(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)))
const Short = storable(Schema.String.pipe(Schema.maxLength(998)))
const Vars = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "Default values of variables" })

const contentFields = {
  subject: Short,
  html: StorableString,
  body_text: StorableString,
  mjml: Schema.NullOr(StorableString).annotations({ description: "MJML design source; when present, html is compiled from it on save" }),
  preheader: Schema.NullOr(Short).annotations({ description: "Hidden inbox-preview text" }),
  vars: Vars,
  from_email: Schema.NullOr(EmailAddress),
  from_name: Schema.NullOr(Short),
  reply_to: Schema.NullOr(EmailAddress)
}

export const Template = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  ...contentFields,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Template" })

const TemplateCreate = Schema.Struct({
  name: Name,
  subject: Schema.optionalWith(Short, { default: () => "" }),
  html: Schema.optionalWith(StorableString, { default: () => "" }),
  body_text: Schema.optionalWith(StorableString, { default: () => "" }),
  mjml: Schema.optionalWith(contentFields.mjml, { default: () => null }),
  preheader: Schema.optionalWith(contentFields.preheader, { default: () => null }),
  vars: Schema.optionalWith(Vars, { default: () => ({}) }),
  from_email: Schema.optionalWith(contentFields.from_email, { default: () => null }),
  from_name: Schema.optionalWith(contentFields.from_name, { default: () => null }),
  reply_to: Schema.optionalWith(contentFields.reply_to, { default: () => null })
})

const TemplatePatch = Schema.Struct({
  name: Schema.optional(Name),
  subject: Schema.optional(Short),
  html: Schema.optional(StorableString),
  body_text: Schema.optional(StorableString),
  mjml: Schema.optional(contentFields.mjml),
  preheader: Schema.optional(contentFields.preheader),
  vars: Schema.optional(Vars),
  from_email: Schema.optional(contentFields.from_email),
  from_name: Schema.optional(contentFields.from_name),
  reply_to: Schema.optional(contentFields.reply_to)
})

const TemplateList = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Template) })
const ListParams = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200)), { default: () => 50 }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()), { default: () => 0 })
})

const TemplateVersion = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  subject: Schema.String,
  actor: Schema.String.annotations({ description: "Id of the API key that made the change" }),
  created_at: Schema.String,
  tiene_html: Schema.Boolean.annotations({ description: "Whether the version has html (the contract's field name)" }),
  html_bytes: Schema.Int
}).annotations({ identifier: "TemplateVersion" })

const PreviewRequest = Schema.Struct({
  subject: Schema.optionalWith(Short, { default: () => "" }),
  html: Schema.optionalWith(StorableString, { default: () => "" }),
  body_text: Schema.optionalWith(StorableString, { default: () => "" }),
  vars: Schema.optionalWith(Vars, { default: () => ({}) }),
  mjml: Schema.optional(Schema.NullOr(StorableString)),
  preheader: Schema.optional(Schema.NullOr(Short))
})

const PreviewResponse = Schema.Struct({
  subject: Schema.String,
  html: Schema.String,
  body_text: Schema.String,
  vars: Vars,
  variables: Schema.Array(Schema.String).annotations({ description: "Every variable the content reads, sorted" }),
  missing: Schema.Array(Schema.String).annotations({ description: "Variables read but not given (they render empty), sorted" })
}).annotations({ identifier: "TemplatePreview" })

const TestSendRequest = Schema.Struct({
  to_email: EmailAddress,
  sample_vars: Schema.optional(Vars),
  from_email: Schema.optional(EmailAddress),
  from_name: Schema.optional(Short)
})

const TestSendResponse = Schema.Struct({ ok: Schema.Boolean, message_id: Schema.String, to: Schema.String })

const Id = Schema.Struct({ id: Schema.String })
const VersionPath = Schema.Struct({ id: Schema.String, vid: Schema.NumberFromString.pipe(Schema.int()) })

export class TemplatesGroup extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/templates").setPayload(TemplateCreate).addSuccess(Template, { status: 201 })
      .annotate(OpenApi.Summary, "Create a template (a version is stored; at most 512 KB of fields together)")
  )
  .add(HttpApiEndpoint.get("list", "/v1/bulk/templates").setUrlParams(ListParams).addSuccess(TemplateList))
  .add(
    HttpApiEndpoint.post("preview", "/v1/bulk/templates/preview").setPayload(PreviewRequest).addSuccess(PreviewResponse)
      .annotate(OpenApi.Summary, "Render content with the engine of real sends; saves nothing")
  )
  .add(HttpApiEndpoint.get("read", "/v1/bulk/templates/:id").setPath(Id).addSuccess(Template).addError(NotFound))
  .add(
    HttpApiEndpoint.patch("update", "/v1/bulk/templates/:id").setPath(Id).setPayload(TemplatePatch).addSuccess(Template)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Update some fields (a version is stored)")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/bulk/templates/:id").setPath(Id)
      .addSuccess(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }))
      .addError(NotFound).addError(Conflict)
      .annotate(OpenApi.Summary, "Delete a template (409 while a campaign not yet completed or a sequence step uses it)")
  )
  .add(
    HttpApiEndpoint.get("versions", "/v1/bulk/templates/:id/versions").setPath(Id)
      .addSuccess(Schema.Struct({ items: Schema.Array(TemplateVersion), max: Schema.Int }))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Versions, newest first, without html; max is how many are kept")
  )
  .add(
    HttpApiEndpoint.post("restore", "/v1/bulk/templates/:id/versions/:vid/restore").setPath(VersionPath).addSuccess(Template)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Make a version's content current again (as a new version)")
  )
  .add(
    HttpApiEndpoint.post("testSend", "/v1/bulk/templates/:id/test-send").setPath(Id).setPayload(TestSendRequest)
      .addSuccess(TestSendResponse)
      .addError(NotFound).addError(Forbidden).addError(RateLimited)
      .annotate(OpenApi.Summary, "Render with sample_vars and send one test message ([Test] subject, no tracking)")
      .annotate(OpenApi.Description, "Answered once the message is queued. Counts against the monthly quota and the rate limit; "
        + "a suppressed recipient is refused (400 recipient_suppressed); the sender domain must be verified (403).")
  )
  // Not found (another key's template too), conflict (delete of a template in use), and the
  // test-send's sender refusals (403): declared once for the group.
  .addError(NotFound)
  .addError(Conflict)
  .addError(Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Templates")
{}
