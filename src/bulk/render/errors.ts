import * as Data from "effect/Data" // the module alone: render workers load this file

/**
 * Content that cannot be compiled or rendered: a Liquid syntax error, an unknown filter, a refused
 * tag, a limit reached, or MJML that does not validate. `param` names the field (`html`, `subject`,
 * `mjml`, ...); the message gives the line and column when the library knows them.
 */
export class RenderFailed extends Data.TaggedError("RenderFailed")<{
  readonly param: string
  readonly message: string
  readonly line: number | null
  readonly column: number | null
  /**
   * The work was stopped at its deadline (HERALD_RENDER_TIMEOUT_MS: the render worker was
   * terminated) or ran its worker out of memory. Delivery counts these per content: after
   * RENDER_STOPS_BEFORE_PAUSE of them the campaign pauses (src/mta/compose/render-at-delivery.ts).
   */
  readonly outOfTime?: boolean | undefined
  /**
   * Not the content's doing: every render worker was taken and the caller's line was full, or the
   * appliance is shutting down. The API answers 503 `render_busy`; a delivery tries again later.
   */
  readonly busy?: boolean | undefined
  /** Refused before any work: the field is over a bound of its own (the API answers 400 `validation_failed`). */
  readonly overBound?: boolean | undefined
}> {}
