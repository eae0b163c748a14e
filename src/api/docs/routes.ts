/**
 * Public documentation routes (no key, DESIGN.md "Public paths"): the OpenAPI documents, the
 * Scalar reference pages (script inlined, so they work with no internet) and the llms texts.
 */
import { HttpApi, HttpApiBuilder, HttpApiScalar, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { stringify } from "yaml"
import { MetaArea } from "../api.ts"
import { HomePageLive } from "../meta/HomePage.ts"
import { renderEventsText } from "../../events/documents.ts"
import { type AreaName, areaApis, areaDocument, clientApi, openApiOf } from "./documents.ts"
import { renderLlmsFull, renderLlmsIndex } from "./llms.ts"

const AREAS: ReadonlyArray<AreaName> = ["transactional", "bulk", "platform"]

const llmsDocs = () => [
  { area: "meta", spec: openApiOf(HttpApi.make("meta").addHttpApi(MetaArea)) },
  ...AREAS.map((area) => ({ area, spec: areaDocument(area) }))
]

const OpenApiRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    for (const area of AREAS) {
      yield* router.get(`/openapi/openapi.${area}.json`, HttpServerResponse.json(areaDocument(area)))
    }
    yield* router.get("/docs.json", HttpServerResponse.json(openApiOf(clientApi)))
    // The contract as a file to commit or feed to a generator: /docs.json (client endpoints only) as YAML.
    const yaml = stringify(openApiOf(clientApi), { aliasDuplicateObjects: false })
    yield* router.get("/openapi/openapi.yaml", Effect.succeed(HttpServerResponse.text(yaml, { contentType: "application/yaml" })))
    const docs = llmsDocs()
    const index = renderLlmsIndex(docs)
    const full = `${renderLlmsFull(docs)}\n${renderEventsText()}`
    const text = (body: string) => HttpServerResponse.text(body, { contentType: "text/plain; charset=utf-8" })
    yield* router.get("/llms.txt", Effect.succeed(text(index)))
    yield* router.get("/llms-full.txt", Effect.succeed(text(full)))
  }))

/**
 * HttpApiScalar serves the API it finds in context; each page gets its own area's API. The page
 * only reads the definitions (its handlers are never called), hence the widening of its type.
 */
const referencePage = (area: AreaName, path: `/${string}`) => {
  const api = areaApis[area] as unknown as HttpApi.Api["Type"]["api"]
  return HttpApiScalar.layer({ path }).pipe(
    Layer.provide(Layer.succeed(HttpApi.Api, { api, context: Context.empty() }))
  )
}

export const DocsRoutesLive = Layer.mergeAll(
  HomePageLive,
  OpenApiRoutes,
  // The router ignores a trailing slash: this serves /reference/<area>/ and /reference/<area>.
  ...AREAS.map((area) => referencePage(area, `/reference/${area}/`))
)
