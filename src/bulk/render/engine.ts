/**
 * The one rendering engine of bulk mail (shared/DESIGN.md "One rendering engine"): templates,
 * previews, test-sends, campaigns, sequence steps and confirmation mail all render through it.
 *
 * Liquid (liquidjs), `{{ variable }}` syntax, configured so that a template is data, never code:
 * - no file system: `include`, `render` and `layout` are refused when the template is parsed
 *   (and the in-memory `templates` map is empty, so no lookup could reach the disk anyway);
 * - unknown filters are a parse error (`strictFilters`); unknown variables render empty;
 * - only own properties are read (`ownPropertyOnly`): no `constructor`, no prototype;
 * - bounded: `parseLimit` (characters parsed), `renderLimit` (milliseconds per render) and
 *   `memoryLimit` (allocations by ranges, loops and string filters), so `(1..100000000)` or a
 *   padded `date` format fails in milliseconds instead of stalling the process.
 * Two instances: the html one escapes every output (`| raw` opts out), the text one (subjects,
 * text parts) does not.
 *
 * This is the engine *inside* a render worker (src/bulk/render/tasks.ts); the rest of Herald calls
 * the RenderEngine service, which runs it off the main thread with a deadline.
 *
 * Compiling is the expensive part, so it happens once per content: `compile` caches parsed
 * templates by a digest of their source (bounded by entries and by source bytes, least recently
 * used first out), and a caller that renders many contacts keeps the `CompiledField` and calls
 * `render` per contact, which neither hashes nor parses.
 */
import { createHash } from "node:crypto"
import * as Either from "effect/Either" // the module alone: a render worker loads no more of Effect than it uses
import { Liquid, Tag, type Template, type TagToken, type TopLevelToken } from "liquidjs"
import { RenderFailed } from "./errors.ts"

export type RenderMode = "html" | "text"

/** One field's source, parsed, with the variables it reads (each as its path of segments). */
export interface CompiledField {
  readonly mode: RenderMode
  readonly source: string
  readonly templates: ReadonlyArray<Template>
  /** Every global variable read, as written (`metadata.plan`), each once, sorted. */
  readonly variables: ReadonlyArray<string>
  readonly paths: ReadonlyArray<ReadonlyArray<string | number>>
}

export type Scope = Readonly<Record<string, unknown>>

export interface EngineLimits {
  /** Characters one parse may read: above the largest template (512 KB of fields together). */
  readonly parseCharacters: number
  /**
   * Milliseconds one field's render may take, checked by liquidjs between nodes only: the hard
   * bound is the render worker's deadline (src/bulk/render/RenderEngine.ts), which stops the
   * worker; this one only gives a template that loops over many nodes a message with its line.
   */
  readonly renderMs: number
  /** Allocations (characters, range elements) one render may make. */
  readonly memory: number
}

export const ENGINE_LIMITS: EngineLimits = {
  parseCharacters: 1_500_000,
  renderMs: 250,
  memory: 16_000_000
}

const CACHE_ENTRIES = 512
const CACHE_SOURCE_BYTES = 64 * 1024 * 1024

/** A tag that reads templates from elsewhere: refused, so no template reaches the server's files. */
class RefusedTag extends Tag {
  constructor(token: TagToken, remainTokens: Array<TopLevelToken>, liquid: Liquid) {
    super(token, remainTokens, liquid)
    throw new Error(`the ${token.name} tag is not allowed: a template cannot read other templates or files`)
  }
  *render(): Generator<unknown, void, unknown> {}
}

const makeLiquid = (mode: RenderMode, limits: EngineLimits) => {
  const liquid = new Liquid({
    strictFilters: true,
    strictVariables: false,
    ownPropertyOnly: true,
    jsTruthy: false,
    dynamicPartials: false,
    templates: {},
    parseLimit: limits.parseCharacters,
    renderLimit: limits.renderMs,
    memoryLimit: limits.memory,
    ...(mode === "html" ? { outputEscape: "escape" as const } : {})
  })
  for (const name of ["include", "render", "layout"]) liquid.registerTag(name, RefusedTag)
  return liquid
}

const POSITION = /, line:(\d+), col:(\d+)$/
/** liquidjs's message when `renderLimit` (milliseconds) is reached. */
const RENDER_TIME_LIMIT = "template render limit exceeded"

/** A liquidjs error as the API's `render_failed`: the field, then line and column in the message. */
export const renderFailure = (param: string, error: unknown): RenderFailed => {
  const raw = error instanceof Error ? error.message : String(error)
  const position = POSITION.exec(raw)
  const line = position === null ? null : Number(position[1])
  const column = position === null ? null : Number(position[2])
  const reason = raw.replace(POSITION, "")
  const where = line === null ? "" : ` at line ${line}, column ${column}`
  return new RenderFailed({
    param,
    line,
    column,
    message: `${param} cannot be rendered${where}: ${reason}`,
    outOfTime: reason.includes(RENDER_TIME_LIMIT)
  })
}

const digest = (mode: RenderMode, source: string) => createHash("sha256").update(mode).update("\0").update(source).digest("base64")

/** Whether `path` leads to a value in `scope` (own properties only, as the engine reads them). */
const resolves = (scope: Scope, path: ReadonlyArray<string | number>): boolean => {
  let value: unknown = scope
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return false
    value = (value as Record<string | number, unknown>)[segment]
  }
  return value !== undefined && value !== null
}

export const makeRenderEngine = (limits: EngineLimits = ENGINE_LIMITS) => {
  const liquids = { html: makeLiquid("html", limits), text: makeLiquid("text", limits) } as const
  // Map keeps insertion order: re-inserting on a hit makes the first key the least recently used.
  const cache = new Map<string, CompiledField>()
  let cachedBytes = 0

  const remember = (key: string, field: CompiledField) => {
    cache.set(key, field)
    cachedBytes += field.source.length
    for (const [oldest, entry] of cache) {
      if (cache.size <= CACHE_ENTRIES && cachedBytes <= CACHE_SOURCE_BYTES) break
      cache.delete(oldest)
      cachedBytes -= entry.source.length
    }
  }

  /** Parses `source` once per content (cached by digest); `param` names the field in errors. */
  const compile = (mode: RenderMode, source: string, param: string): Either.Either<CompiledField, RenderFailed> => {
    const key = digest(mode, source)
    const hit = cache.get(key)
    if (hit !== undefined) {
      cache.delete(key)
      cache.set(key, hit)
      return Either.right(hit)
    }
    try {
      const liquid = liquids[mode]
      const templates = liquid.parse(source)
      // One static analysis for both lists: it is most of a large template's compile (8 s of the
      // 512 KB bench template on a loaded machine), and liquidjs's two helpers run it once each.
      const found = Object.values(liquid.analyzeSync(templates).globals).flat()
      const segmentsOf = new Map(found.map((v) => {
        const segments = v.toArray()
        return [JSON.stringify(segments), segments] as const
      }))
      // A computed segment (`a[b]`) ends the path checked for `missing`: its value is per render.
      const paths = [...segmentsOf.values()].map((segments) => {
        const computed = segments.findIndex((s) => typeof s !== "string" && typeof s !== "number")
        return (computed === -1 ? segments : segments.slice(0, computed)) as ReadonlyArray<string | number>
      })
      const variables = [...new Set(found.map(String))].sort()
      const field: CompiledField = { mode, source, templates, variables, paths }
      remember(key, field)
      return Either.right(field)
    } catch (error) {
      return Either.left(renderFailure(param, error))
    }
  }

  /** One contact's render of a compiled field. */
  const render = (field: CompiledField, scope: Scope, param: string): Either.Either<string, RenderFailed> => {
    try {
      return Either.right(liquids[field.mode].renderSync(field.templates as Array<Template>, scope))
    } catch (error) {
      return Either.left(renderFailure(param, error))
    }
  }

  /** The variables `field` reads that `scope` does not give (they rendered empty). */
  const missing = (field: CompiledField, scope: Scope): ReadonlyArray<string> =>
    field.paths.filter((path) => !resolves(scope, path)).map((path) => path.join("."))

  return { compile, render, missing, cacheSize: () => cache.size } as const
}

export type RenderEngineShape = ReturnType<typeof makeRenderEngine>
