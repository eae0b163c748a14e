/**
 * /v1/bulk/templates: templates of the calling key (REST conventions of shared/DESIGN.md "Rules
 * shared by the bulk issues"), their versions, a preview that saves nothing, and a test-send.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, Forbidden, NotFound, RateLimited, Unprocessable } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { boundedText, ContentText, IdText, LineText, MAX_NAME_LENGTH, MAX_VARS_BYTES, MAX_VARS_DEPTH, queryInt, TemplateVars } from "../../http/bounds.ts"

const Name = boundedText(MAX_NAME_LENGTH, { trim: true, minLength: 1 })
const Short = LineText
const Vars = TemplateVars.annotations({ description: `Default values of variables (at most ${MAX_VARS_BYTES / 1024} KB as compact JSON, ${MAX_VARS_DEPTH} levels deep)` })

const contentFields = {
  subject: Short,
  html: ContentText,
  body_text: ContentText,
  mjml: Schema.NullOr(ContentText).annotations({ description: "MJML design source; when present, html is compiled from it on save" }),
  preheader: Schema.NullOr(Short).annotations({ description: "Hidden inbox-preview text" }),
  vars: Vars,
  from_email: Schema.NullOr(EmailAddress),
  from_name: Schema.NullOr(Short),
  reply_to: Schema.NullOr(EmailAddress)
}

/** Answers show what is stored as it is: a row from before a bound stays readable. */
const StoredVars = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "Default values of variables" })

export const Template = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  ...contentFields,
  html: Schema.String,
  body_text: Schema.String,
  mjml: Schema.NullOr(Schema.String).annotations({ description: "MJML design source; when present, html is compiled from it on save" }),
  vars: StoredVars,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Template" })

const TemplateCreate = Schema.Struct({
  name: Name,
  subject: Schema.optionalWith(Short, { default: () => "" }),
  html: Schema.optionalWith(ContentText, { default: () => "" }),
  body_text: Schema.optionalWith(ContentText, { default: () => "" }),
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
  html: Schema.optional(ContentText),
  body_text: Schema.optional(ContentText),
  mjml: Schema.optional(contentFields.mjml),
  preheader: Schema.optional(contentFields.preheader),
  vars: Schema.optional(Vars),
  from_email: Schema.optional(contentFields.from_email),
  from_name: Schema.optional(contentFields.from_name),
  reply_to: Schema.optional(contentFields.reply_to)
})

const TemplateList = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Template) })
const ListParams = Schema.Struct({
  limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
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

const TemplateVersionContent = Schema.extend(TemplateVersion, Schema.Struct({
  html: Schema.String,
  body_text: Schema.String,
  mjml: Schema.NullOr(Schema.String).annotations({ description: "MJML design source; when present, html is what it compiled to" }),
  preheader: Schema.NullOr(Schema.String),
  vars: StoredVars,
  from_email: Schema.NullOr(Schema.String),
  from_name: Schema.NullOr(Schema.String),
  reply_to: Schema.NullOr(Schema.String)
})).annotations({
  identifier: "TemplateVersionContent",
  description: "A version as the history lists it, with the content it stored",
  examples: [{
    id: 3,
    name: "Welcome",
    subject: "Welcome, {{ name }}",
    actor: "key_5Gh2Jk8Lm1Np4Qr7St0V",
    created_at: "2026-11-02T10:15:00.000Z",
    tiene_html: true,
    html_bytes: 38,
    html: "<h1>Welcome, {{ name }}</h1><p>Hi</p>",
    body_text: "Welcome, {{ name }}",
    mjml: null,
    preheader: "Glad you are here",
    vars: { name: "friend" },
    from_email: "news@example.org",
    from_name: "Example News",
    reply_to: null
  }]
})

const PreviewRequest = Schema.Struct({
  subject: Schema.optionalWith(Short, { default: () => "" }),
  html: Schema.optionalWith(ContentText, { default: () => "" }),
  body_text: Schema.optionalWith(ContentText, { default: () => "" }),
  vars: Schema.optionalWith(Vars, { default: () => ({}) }),
  mjml: Schema.optional(Schema.NullOr(ContentText)),
  preheader: Schema.optional(Schema.NullOr(Short))
})

const PreviewResponse = Schema.Struct({
  subject: Schema.String,
  html: Schema.String,
  body_text: Schema.String,
  vars: StoredVars,
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

const Id = Schema.Struct({ id: IdText })
const VersionPath = Schema.Struct({ id: IdText, vid: queryInt(0) })

export class TemplatesGroup extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/templates").setPayload(TemplateCreate).addSuccess(Template, { status: 201 })
      .annotate(OpenApi.Summary, "Create a template (a version is stored; at most 512 KB of fields together)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bulk/templates").setUrlParams(ListParams).addSuccess(TemplateList).addError(Unprocessable)
      .annotate(OpenApi.Summary, "List the key's templates, newest first")
  )
  .add(
    HttpApiEndpoint.post("preview", "/v1/bulk/templates/preview").setPayload(PreviewRequest).addSuccess(PreviewResponse)
      .annotate(OpenApi.Summary, "Render content with the engine of real sends; saves nothing")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/templates/:id").setPath(Id).addSuccess(Template).addError(NotFound)
      .annotate(OpenApi.Summary, "A template with its content")
  )
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
    HttpApiEndpoint.get("version", "/v1/bulk/templates/:id/versions/:vid").setPath(VersionPath).addSuccess(TemplateVersionContent)
      .addError(NotFound).addError(Unprocessable)
      .annotate(OpenApi.Summary, "One version with its content (html, body_text, mjml…), for a diff and a restore; 404 once pruned")
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
