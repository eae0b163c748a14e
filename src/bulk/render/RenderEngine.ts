/** The engine as a service: one instance (one cache) per appliance. */
import { Effect } from "effect"
import { makeRenderEngine } from "./engine.ts"

export class RenderEngine extends Effect.Service<RenderEngine>()("herald/RenderEngine", {
  sync: makeRenderEngine
}) {}
