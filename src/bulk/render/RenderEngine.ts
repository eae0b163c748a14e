/**
 * The rendering engine as a service (one per appliance): every Liquid render and MJML compile of
 * Herald — previews, test-sends, template/campaign/step saves, confirmation mail and delivery —
 * and the message content view's compose and parse (message-view.ts) run here in worker threads
 * (src/bulk/render/render-worker.ts), never on the main thread that
 * answers every account's API, MTA and MX. A task's deadline (HERALD_RENDER_TIMEOUT_MS) is enforced
 * by terminating its worker: liquidjs checks its own time limit only between nodes, and one filter
 * (`split | sort_natural` over a doubled string) or one MJML compile can run for seconds in between.
 *
 * - Fair: `owner` is the account; one account's tasks occupy at most half the workers
 *   (HERALD_RENDER_WORKERS) at a time, the rest of its tasks wait in its own line
 *   (src/lib/worker-pool.ts `perOwner`).
 * - Cheap per recipient: a content is prepared once per worker and kept there by a digest of its
 *   source; a task sends the source only while this thread has not sent that digest lately, then
 *   the digest and the contact's variables alone (a worker that no longer holds it asks again).
 * - Failures are RenderFailed: the content's own (syntax, limits, `outOfTime` for a stopped worker
 *   or one out of memory) or `busy` (not the content's doing: every line full, or shutting down).
 */
import { createHash } from "node:crypto"
import { Effect, Scope as EffectScope } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { makeWorkerPool, type WorkerTaskError } from "../../lib/worker-pool.ts"
import type { ContentSource, RenderedContent } from "./content.ts"
import { ENGINE_LIMITS, type Scope } from "./engine.ts"
import { RenderFailed } from "./errors.ts"
import type { ViewedMessage, ViewTask } from "./message-view.ts"
import { mjmlInputProblem } from "./mjml.ts"
import type { RenderWorkerData } from "./render-worker.ts"
import { type FieldSource, makeTaskRunner, type RenderAnswer, type RenderTask } from "./tasks.ts"

const RENDER_WORKER = new URL("./render-worker.ts", import.meta.url)
/** Heap of each render worker (Node): the engine's memory limit (16 M characters) fits well inside; a task past it ends its worker only. */
const RENDER_WORKER_MEMORY_MB = 256
/** Tasks waiting for a worker, all accounts together and one account's; past them a call gets `busy`. A waiting delivery task is its key and a contact's variables. */
const QUEUED_TASKS = 8_192
const QUEUED_TASKS_PER_ACCOUNT = 2_048
/** liquidjs's own render-time check (between nodes), at most. */
const LIQUID_RENDER_MS = 5_000
/** Digests whose source this thread sent lately: their next tasks carry the digest alone. */
const SENT_KEYS = 1_024

export interface Rendered extends RenderedContent {
  /** Every variable the content reads, sorted. */
  readonly variables: ReadonlyArray<string>
}

const contentKey = (c: ContentSource) =>
  createHash("sha256").update(JSON.stringify([c.subject, c.html, c.body_text, c.preheader ?? null])).digest("base64")

const encoder = new TextEncoder()

export class RenderEngine extends Effect.Service<RenderEngine>()("herald/RenderEngine", {
  scoped: Effect.gen(function*() {
    const { renderWorkers, renderTimeoutMs } = yield* AppConfig
    // liquidjs's own check between nodes stops a loop over many nodes sooner, with its line (a cached
    // render of the 512 KB bench template takes 0.25 s); the worker's deadline bounds everything else.
    const limits = { ...ENGINE_LIMITS, renderMs: Math.min(renderTimeoutMs, LIQUID_RENDER_MS) }
    let local: ReturnType<typeof makeTaskRunner> | undefined
    // Started at the first render and closed with the appliance: most starts (an operator command, an
    // appliance that sends no bulk mail, every test's appliance) never render, and each worker costs
    // a thread, its modules' load and its heap.
    const scope = yield* Effect.scope
    const pool = yield* Effect.cached(EffectScope.extend(makeWorkerPool<RenderAnswer>({
      name: "render",
      file: RENDER_WORKER,
      size: renderWorkers,
      // One task per worker at a time: a worker stopped at its deadline takes no other task with it.
      pipeline: 1,
      perOwner: Math.max(1, Math.floor(renderWorkers / 2)),
      queue: QUEUED_TASKS,
      ownerQueue: QUEUED_TASKS_PER_ACCOUNT,
      timeout: renderTimeoutMs,
      maxMemoryMb: RENDER_WORKER_MEMORY_MB,
      workerData: { limits } satisfies RenderWorkerData,
      inProcess: (bytes) => (local ??= makeTaskRunner(limits))(JSON.parse(new TextDecoder().decode(bytes)) as RenderTask)
    }), scope))
    const sentKeys = new Set<string>()
    const remember = (key: string) => {
      sentKeys.delete(key)
      sentKeys.add(key)
      if (sentKeys.size > SENT_KEYS) sentKeys.delete(sentKeys.values().next().value!)
    }

    const asFailure = (error: WorkerTaskError, param: string): RenderFailed => {
      const base = { param, line: null, column: null }
      switch (error.reason) {
        case "timeout":
          return new RenderFailed({ ...base, outOfTime: true, message: `${param} cannot be rendered: the work took longer than ${renderTimeoutMs} ms and was stopped` })
        case "memory":
          return new RenderFailed({ ...base, outOfTime: true, message: `${param} cannot be rendered: the work ran out of memory and was stopped` })
        case "failed":
          return new RenderFailed({ ...base, message: `${param} cannot be rendered: ${error.message}` })
        default:
          return new RenderFailed({ ...base, busy: true, message: `rendering is busy, try again shortly (${error.message})` })
      }
    }

    /** One task in a worker; a task that only went down with a neighbour's worker (`crashed`) is tried once more. */
    const run = (owner: string, task: RenderTask, param: string): Effect.Effect<RenderAnswer, RenderFailed> => {
      const once = Effect.flatMap(pool, (workers) => workers.run(encoder.encode(JSON.stringify(task)), owner))
      return once.pipe(
        Effect.catchIf((e) => e.reason === "crashed", () => once),
        Effect.mapError((e) => asFailure(e, param)),
        Effect.flatMap((answer) => (answer._tag === "failed" ? Effect.fail(new RenderFailed(answer.error)) : Effect.succeed(answer)))
      )
    }

    const unexpected = (answer: RenderAnswer) => Effect.die(new Error(`the render worker answered ${answer._tag} to a task it was not given`))
    const mainParam = (content: ContentSource) => (content.html !== "" ? "html" : "body_text")

    /** Parses every field of `content` (a save's check); answers the variables it reads. */
    const check = (owner: string, content: ContentSource): Effect.Effect<ReadonlyArray<string>, RenderFailed> =>
      Effect.flatMap(run(owner, { op: "content", key: contentKey(content), content, scope: null }, mainParam(content)), (answer) =>
        answer._tag === "checked" ? Effect.succeed(answer.variables) : unexpected(answer))

    /** `content` rendered with `scope`. */
    const render = (owner: string, content: ContentSource, scope: Scope): Effect.Effect<Rendered, RenderFailed> =>
      Effect.gen(function*() {
        const key = contentKey(content)
        const param = mainParam(content)
        let answer = yield* run(owner, { op: "content", key, ...(sentKeys.has(key) ? {} : { content }), scope }, param)
        if (answer._tag === "unknown") answer = yield* run(owner, { op: "content", key, content, scope }, param)
        remember(key)
        return answer._tag === "rendered" ? { ...answer.rendered, variables: answer.variables } : yield* unexpected(answer)
      })

    /** Named fields rendered in order (each one's result a variable of the next); `scope` null only checks them. */
    const fields = (owner: string, list: ReadonlyArray<FieldSource>, scope: Scope | null): Effect.Effect<Readonly<Record<string, string>>, RenderFailed> =>
      Effect.flatMap(run(owner, { op: "fields", fields: list, scope }, list[0]?.param ?? "content"), (answer) =>
        answer._tag === "fields" ? Effect.succeed(answer.values) : unexpected(answer))

    /** MJML compiled to html; a source over its element bound is refused here, before any work. */
    const mjml = (owner: string, source: string): Effect.Effect<string, RenderFailed> => {
      const problem = mjmlInputProblem(source)
      if (problem !== null) return Effect.fail(problem)
      return Effect.flatMap(run(owner, { op: "mjml", source }, "mjml"), (answer) =>
        answer._tag === "mjml" ? Effect.succeed(answer.html) : unexpected(answer))
    }

    /** A stored message composed as sent and read back (message-view.ts), under the same deadline and fairness as a render. */
    const view = (owner: string, task: ViewTask): Effect.Effect<ViewedMessage, RenderFailed> =>
      Effect.flatMap(run(owner, task, "content"), (answer) => (answer._tag === "view" ? Effect.succeed(answer.view) : unexpected(answer)))

    return { check, render, fields, mjml, view, stats: Effect.flatMap(pool, (workers) => workers.stats) } as const
  })
}) {}

export type RenderEngineShape = RenderEngine
