import { Data } from "effect"

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
   * The render ran out of its time (ENGINE_LIMITS.renderMs, wall clock): on a busy machine a
   * sound template can too, so a delivery retries it later rather than failing for good.
   */
  readonly outOfTime?: boolean
}> {}
