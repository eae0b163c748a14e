/**
 * The machine-readable contract, derived from the HttpApi definitions (never written by hand):
 * one OpenAPI document per area, and /docs.json holding every client endpoint (no /v1/admin).
 * Each document's info.version is the package version: the contract is versioned with the code.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { withWebhooks } from "../../events/documents.ts"
import { VERSION } from "../../version.ts"
import { AdminArea, BulkArea, MetaArea, PlatformArea, TransactionalArea } from "../api.ts"
import { BadRequest, Internal, NotFound, PayloadTooLarge } from "../../http/errors.ts"
import { withReference } from "../../http/reference.ts"
import { COMMON_ERRORS, REFERENCE } from "./reference.ts"

export type AreaName = "transactional" | "bulk" | "platform"

const describe: Record<AreaName | "all", { title: string; description: string }> = {
  transactional: {
    title: "Herald — transactional API",
    description: "Individual sends (optionally scheduled), sandbox mode and the audit log of sends."
  },
  bulk: {
    title: "Herald — bulk API",
    description: "Campaigns, contacts, lists, segments, sequences, templates, analytics and tracking."
  },
  platform: {
    title: "Herald — platform API",
    description: "API keys, sending domains, webhooks, usage and plans, DMARC reports, support; admin operations."
  },
  all: {
    title: "Herald API",
    description: "Every client endpoint of Herald, a self-hosted email delivery appliance."
  }
}

// Documents only need the definitions, not the handler types, so any area API fits here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyApi = HttpApi.HttpApi<string, any, any, any>

/**
 * Adds the errors every endpoint can answer, the document's title and version, and each
 * operation's errors in words and examples (src/http/reference.ts).
 */
const document = (name: AreaName | "all", api: AnyApi): AnyApi =>
  api
    .addError(BadRequest)
    .addError(NotFound)
    .addError(PayloadTooLarge)
    .addError(Internal)
    .annotate(OpenApi.Title, describe[name].title)
    .annotate(OpenApi.Description, `${describe[name].description}\n\n${COMMON_ERRORS}`)
    .annotate(OpenApi.Version, VERSION)
    .annotate(OpenApi.Transform, withReference(REFERENCE))

export const areaApis: Record<AreaName, AnyApi> = {
  transactional: document("transactional", HttpApi.make("transactional").addHttpApi(TransactionalArea)),
  bulk: document("bulk", HttpApi.make("bulk").addHttpApi(BulkArea)),
  platform: document("platform", HttpApi.make("platform").addHttpApi(PlatformArea).addHttpApi(AdminArea))
}

/** /docs.json: the client endpoints of every area, with the public meta endpoints. */
export const clientApi: AnyApi = document(
  "all",
  HttpApi.make("herald")
    .addHttpApi(MetaArea)
    .addHttpApi(TransactionalArea)
    .addHttpApi(BulkArea)
    .addHttpApi(PlatformArea)
)

export const openApiOf = (api: AnyApi): OpenApi.OpenAPISpec => OpenApi.fromApi(api)

/** An area's served document; the platform one also documents every webhook event's payload. */
export const areaDocument = (area: AreaName): OpenApi.OpenAPISpec =>
  area === "platform" ? withWebhooks(openApiOf(areaApis[area])) : openApiOf(areaApis[area])
