/** The reference's errors and examples for /v1/bulk/templates (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import { MAILING_ERRORS } from "../reference-errors.ts"
import type { TemplatesGroup } from "./Api.ts"

const TEMPLATE_ID = "tp_4mQ8vR2kT6wX9zB3nC5d"
const NOT_FOUND = `404 \`not_found\` when this key has no template ${"`{id}`"}.`
const CONTENT = "400 `render_failed` (`param` names the field, the message its line and column) when the content does not "
  + "compile or render; 413 `payload_too_large` over 512 KB of fields together; 503 `render_busy` when every render worker is taken."
const HTML_FROM_MJML = "400 `validation_failed` (param `html`) when html alone is given for a template whose mjml compiles it."

const template = {
  id: TEMPLATE_ID,
  name: "Welcome",
  subject: "Welcome, {{ name }}",
  html: "<h1>Welcome, {{ name }}</h1><p>Glad you are here.</p>",
  body_text: "Welcome, {{ name }}. Glad you are here.",
  mjml: null,
  preheader: "Glad you are here",
  vars: { name: "friend" },
  from_email: "news@example.org",
  from_name: "Example News",
  reply_to: null,
  created_at: "2026-11-02T10:15:00.000Z",
  updated_at: "2026-11-02T10:15:00.000Z"
}

const version = {
  id: 3,
  name: "Welcome",
  subject: "Welcome, {{ name }}",
  actor: "key_5Gh2Jk8Lm1Np4Qr7St0V",
  created_at: "2026-11-02T10:15:00.000Z",
  tiene_html: true,
  html_bytes: 52
}

export const templatesReference: GroupReference<typeof TemplatesGroup> = {
  create: {
    errors: CONTENT,
    request: {
      name: "Welcome",
      subject: "Welcome, {{ name }}",
      html: "<h1>Welcome, {{ name }}</h1><p>Glad you are here.</p>",
      body_text: "Welcome, {{ name }}. Glad you are here.",
      preheader: "Glad you are here",
      vars: { name: "friend" },
      from_email: "news@example.org",
      from_name: "Example News"
    },
    response: template
  },
  list: {
    errors: "422 `query_too_expensive` when the read runs past the statement timeout.",
    response: { total: 1, limit: 50, offset: 0, items: [template] }
  },
  preview: {
    errors: CONTENT,
    request: { subject: "Hello {{ name }}", html: "<p>Hi {{ name }}, your code is {{ code }}</p>", vars: { name: "Ada" } },
    response: {
      subject: "Hello Ada",
      html: "<p>Hi Ada, your code is </p>",
      body_text: "Hi Ada, your code is",
      vars: { name: "Ada" },
      variables: ["code", "name"],
      missing: ["code"]
    }
  },
  read: { errors: NOT_FOUND, response: template },
  update: {
    errors: `${NOT_FOUND} ${CONTENT} ${HTML_FROM_MJML}`,
    request: { subject: "Welcome aboard, {{ name }}" },
    response: { ...template, subject: "Welcome aboard, {{ name }}", updated_at: "2026-11-03T08:00:00.000Z" }
  },
  remove: {
    errors: `${NOT_FOUND} 409 \`conflict\` while a campaign not yet completed or a sequence step uses it (the message names them).`,
    response: { id: TEMPLATE_ID, deleted: true }
  },
  versions: { errors: NOT_FOUND, response: { items: [version], max: 20 } },
  version: {
    errors: "404 `not_found` when this key has no template `{id}` or the version was pruned; 422 `query_too_expensive` "
      + "when the read runs past the statement timeout.",
    response: {
      ...version,
      html: "<h1>Welcome, {{ name }}</h1><p>Glad you are here.</p>",
      body_text: "Welcome, {{ name }}. Glad you are here.",
      mjml: null,
      preheader: "Glad you are here",
      vars: { name: "friend" },
      from_email: "news@example.org",
      from_name: "Example News",
      reply_to: null
    }
  },
  restore: {
    errors: `404 \`not_found\` when this key has no template \`{id}\` or no version \`{vid}\` of it. ${CONTENT}`,
    response: template
  },
  testSend: {
    errors: `${NOT_FOUND} 400 \`validation_failed\` (param \`from_email\`) when neither the call nor the template gives a `
      + "sender, `recipient_suppressed` (param `to_email`) for a suppressed address or a blocked domain. " + MAILING_ERRORS,
    request: { to_email: "ada@example.org", sample_vars: { name: "Ada" } },
    response: { ok: true, message_id: "msg_7Hk2Lm9Np3Qr6St1Vw4X", to: "ada@example.org" }
  }
}
