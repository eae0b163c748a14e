/**
 * What the reference pages show for each operation beyond its schemas (issue 31 item 3): the
 * errors it answers, stated in words, and a request and response example. Each area keeps these in
 * an `examples.ts` beside its Api.ts, one entry per endpoint of a group (`GroupReference` makes a
 * missing or misspelt endpoint a type error); src/api/docs/documents.ts applies them to every
 * document with `withReference`. test/http/reference-examples.test.ts decodes every example with
 * its endpoint's own schemas, so an example cannot drift from the contract.
 *
 * Examples are the wire form (the schemas' encoded side): what a client sends and receives.
 */
import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"

export interface OperationReference {
  /**
   * The errors this operation answers beyond the ones every operation can (the document's
   * description), as "<status> `<code>` when …"; "" where the endpoint's own description states them.
   */
  readonly errors: string
  /** The request body, for an operation that takes one. */
  readonly request?: unknown
  /** A request body per content type, where one takes another form (text/csv beside JSON). */
  readonly requestAs?: Readonly<Record<string, unknown>>
  /** The success answer. */
  readonly response: unknown
}

/** One entry per endpoint of the group, keyed by the endpoint's name. */
export type GroupReference<Group> = {
  readonly [Name in HttpApiEndpoint.HttpApiEndpoint.Name<HttpApiGroup.HttpApiGroup.Endpoints<Group>>]: OperationReference
}

/** Every group's reference, keyed by the group's identifier (an operationId is `<group>.<endpoint>`). */
export type ApiReference = Readonly<Record<string, Readonly<Record<string, OperationReference>>>>

/** The parts of an OpenAPI operation this touches (the platform's types fix the content types). */
interface Media { readonly [key: string]: unknown }
interface Answer { readonly description: string; readonly content?: Readonly<Record<string, Media>> }
interface Operation {
  readonly operationId: string
  readonly description?: string
  readonly requestBody?: { readonly content: Readonly<Record<string, Media>> }
  readonly responses: Readonly<Record<string, Answer>>
}

const exampleOn = (content: Readonly<Record<string, Media>>, example: unknown, byType: Readonly<Record<string, unknown>> = {}) =>
  Object.fromEntries(Object.entries(content).map(([type, media]) => [type, { ...media, example: byType[type] ?? example }]))

/** The examples go on the media types, where reference pages show them (the success status is the lowest 2xx). */
const withExamples = (op: Operation, ref: OperationReference): Operation => {
  const success = Object.keys(op.responses).filter((status) => status.startsWith("2")).sort()[0]
  const answer = success === undefined ? undefined : op.responses[success]
  const responses = answer?.content === undefined || success === undefined
    ? op.responses
    : { ...op.responses, [success]: { ...answer, content: exampleOn(answer.content, ref.response) } }
  const body = op.requestBody
  return body === undefined || ref.request === undefined
    ? { ...op, responses }
    : { ...op, responses, requestBody: { ...body, content: exampleOn(body.content, ref.request, ref.requestAs) } }
}

/** The operation with its errors appended to its description and its examples on its media types. */
const applyTo = (op: Operation, reference: ApiReference): Operation => {
  const [group, endpoint] = op.operationId.split(".")
  const ref = group === undefined || endpoint === undefined ? undefined : reference[group]?.[endpoint]
  if (ref === undefined) return op
  const description = ref.errors === "" ? op.description : op.description === undefined ? ref.errors : `${op.description}\n\n${ref.errors}`
  return withExamples(description === undefined ? op : { ...op, description }, ref)
}

/** An OpenApi.Transform for a whole document: every operation found in `reference` gets its entry. */
export const withReference = (reference: ApiReference) => (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = spec.paths as Readonly<Record<string, Readonly<Record<string, Operation>>>>
  const applied = Object.fromEntries(Object.entries(paths).map(([path, item]) => [
    path,
    Object.fromEntries(Object.entries(item).map(([method, op]) => [method, applyTo(op, reference)]))
  ]))
  return { ...spec, paths: applied }
}
