/**
 * The webhook payloads as documents, generated from the event schemas: the OpenAPI 3.1 `webhooks`
 * section of the platform document (one entry per event, with an example) and the events section
 * of /llms-full.txt. test/http/docs.test.ts snapshots both.
 */
import { type OpenApi, OpenApiJsonSchema } from "@effect/platform"
import { Option, SchemaAST } from "effect"
import { EVENT_NAMES, EVENTS, EXAMPLES, receiverBody } from "./schema.ts"

/** An example receiver body: the common fields, then the event's own. */
export const exampleBody = (name: (typeof EVENT_NAMES)[number]) => ({
  id: "evt_01JD3X8Q2V7K",
  event: name,
  ts: "2026-11-26T09:14:03.512Z",
  app: "key_7h2k9d",
  ...EXAMPLES[name]
})

const describe = (name: (typeof EVENT_NAMES)[number]) =>
  SchemaAST.getDescriptionAnnotation(EVENTS[name].ast).pipe(Option.getOrElse(() => name))

/** The platform document with a `webhooks` entry per event; body schemas join its components. */
export const withWebhooks = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec & { readonly webhooks: Record<string, unknown> } => {
  const defs: Record<string, unknown> = { ...spec.components.schemas }
  const webhooks = Object.fromEntries(EVENT_NAMES.map((name) => [name, {
    post: {
      summary: describe(name),
      description: "Signed with X-Herald-Signature (sha256=HMAC over `<X-Herald-Timestamp>.<raw body>`); any 2xx acknowledges it.",
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: OpenApiJsonSchema.makeWithDefs(receiverBody(name), { defs, defsPath: "#/components/schemas/" }),
            example: exampleBody(name)
          }
        }
      },
      responses: { "200": { description: "Any 2xx: received" } }
    }
  }]))
  return { ...spec, components: { ...spec.components, schemas: defs as typeof spec.components.schemas }, webhooks }
}

/** The events section of /llms-full.txt: each event, its meaning, and an example body. */
export const renderEventsText = (): string =>
  [
    "## Webhook events",
    "",
    "Each key's webhook URL receives a POST per event: JSON with `id`, `event`, `ts`, `app` and the event's fields,",
    "signed with `X-Herald-Signature: sha256=<hex HMAC-SHA256 of \"<X-Herald-Timestamp>.<raw body>\">`.",
    "",
    ...EVENT_NAMES.flatMap((name) => [
      `### ${name}`,
      describe(name),
      `Fields: ${Object.keys(EVENTS[name].fields).filter((f) => f !== "event").join(", ")}`,
      "```json",
      JSON.stringify(exampleBody(name)),
      "```",
      ""
    ])
  ].join("\n")
