/** Service meta: GET /version and GET /health, public (no key). */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Unavailable } from "../../http/errors.ts"

export const VersionResponse = Schema.Struct({
  version: Schema.String.pipe(Schema.pattern(/^\d+\.\d+\.\d+$/))
}).annotations({ identifier: "Version" })

export const HealthResponse = Schema.Struct({
  status: Schema.Literal("ok"),
  database: Schema.Literal("ok")
}).annotations({ identifier: "Health" })

export class MetaGroup extends HttpApiGroup.make("meta")
  .add(
    HttpApiEndpoint.get("version", "/version")
      .addSuccess(VersionResponse)
      .annotate(OpenApi.Summary, "Version of the appliance and of this contract (MAJOR.MINOR.PATCH)")
  )
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(HealthResponse)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "200 when the appliance and its database answer; 503 with the reason otherwise")
  )
  .annotate(OpenApi.Title, "Meta")
{}

export class MetaApi extends HttpApi.make("meta").add(MetaGroup) {}
