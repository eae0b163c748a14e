/**
 * Public documentation routes (no key, DESIGN.md "Public paths"): the OpenAPI documents, the
 * Scalar reference pages (script inlined, so they work with no internet) and the llms texts.
 */
import { HttpApi, HttpApiBuilder, HttpServerResponse } from "@effect/platform"
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

/**
 * A document built on its first request and kept (`Effect.cached`, as the reference pages below):
 * these are pure functions of the definitions, and building them all at start-up (the YAML alone
 * ~0.45 s of CPU) delayed the second start by most of a second (bench:start, issue 31 item 4).
 */
const onFirstRequest = <A>(build: () => A) => Effect.cached(Effect.sync(build))

const text = (body: string) => HttpServerResponse.text(body, { contentType: "text/plain; charset=utf-8" })

const OpenApiRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    for (const area of AREAS) {
      const document = yield* onFirstRequest(() => areaDocument(area))
      yield* router.get(`/openapi/openapi.${area}.json`, Effect.flatMap(document, HttpServerResponse.json))
    }
    const clientDocument = yield* onFirstRequest(() => openApiOf(clientApi))
    yield* router.get("/docs.json", Effect.flatMap(clientDocument, HttpServerResponse.json))
    // The contract as a file to commit or feed to a generator: /docs.json (client endpoints only) as YAML.
    const yaml = yield* onFirstRequest(() => stringify(openApiOf(clientApi), { aliasDuplicateObjects: false }))
    yield* router.get("/openapi/openapi.yaml", Effect.map(yaml, (body) => HttpServerResponse.text(body, { contentType: "application/yaml" })))
    const llms = yield* onFirstRequest(() => {
      const docs = llmsDocs()
      return { index: renderLlmsIndex(docs), full: `${renderLlmsFull(docs)}\n${renderEventsText()}` }
    })
    yield* router.get("/llms.txt", Effect.map(llms, ({ index }) => text(index)))
    yield* router.get("/llms-full.txt", Effect.map(llms, ({ full }) => text(full)))
  }))

/**
 * A reference page, built on its first request like the documents above (here the build is an
 * Effect: it imports the script). Each page inlines Scalar's 3.4 MB script (so it works with no
 * internet) and its area's OpenAPI document; building the three at every start cost ~0.5 s of the
 * 2.6–2.9 s of CPU a start spent until /health answered (parsing the script's module, three
 * `OpenApi.fromApi`, three 3.4 MB pages encoded), and held ~10 MB, for pages few ever open.
 * `import()` keeps the script out of the start: the bundle carries it in a chunk of its own.
 *
 * HttpApiScalar only offers its page as a route of a router, serving the API it finds in context:
 * the page is that route of a router of its own (the page only reads the definitions, its
 * handlers are never called, hence the widening of its type), and each request is handed to it.
 */
const referencePage = (area: AreaName, path: `/${string}`) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const api = areaApis[area] as unknown as HttpApi.Api["Type"]["api"]
      const page = yield* Effect.cached(Effect.gen(function*() {
        const { layer } = yield* Effect.promise(() => import("@effect/platform/HttpApiScalar"))
        return yield* HttpApiBuilder.Router.router.pipe(Effect.provide(layer({ path }).pipe(
          Layer.provide(Layer.succeed(HttpApi.Api, { api, context: Context.empty() })),
          Layer.provideMerge(HttpApiBuilder.Router.Live)
        )))
      }))
      yield* router.get(path, Effect.flatten(page))
    })
  )

export const DocsRoutesLive = Layer.mergeAll(
  HomePageLive,
  OpenApiRoutes,
  // The router ignores a trailing slash: this serves /reference/<area>/ and /reference/<area>.
  ...AREAS.map((area) => referencePage(area, `/reference/${area}/`))
)
