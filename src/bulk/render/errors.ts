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
}> {}
