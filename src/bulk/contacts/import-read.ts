/**
 * Reading a JSON contact import in the import worker (import-worker.ts; plain code, no database):
 * the body's bytes in, its contacts staged as COPY text sent in chunks (import-rows.ts). Parsing,
 * the schema's decode and the staging of a MAX_JSON_MB body are seconds of CPU on a loaded
 * machine; on the main thread they froze every other request. Here they run under the import
 * pool's deadline (HERALD_IMPORT_PARSE_TIMEOUT_S; its clock stops while a chunk is being copied),
 * which stops the worker, and its fair shares.
 *
 * A refusal is a value with what the answer needs (Http.ts): the same codes and `param`s as when
 * the main thread did this work.
 */
import { Buffer } from "node:buffer"
import { Either, ParseResult, Schema } from "effect"
import { parseBoundedJson } from "../../http/bounded-json.ts"
import { ImportRequest } from "./import-schema.ts"
import { ImportRows, type StagedImport } from "./import-rows.ts"

export interface JsonImportOptions {
  readonly tags: ReadonlyArray<string>
  readonly updateExisting: boolean
  readonly listIds: ReadonlyArray<string>
  readonly confirmed: boolean
}

export type JsonImportResult =
  | { readonly ok: true; readonly staged: StagedImport; readonly options: JsonImportOptions }
  | {
    readonly ok: false
    /** `invalid`: 400 validation_failed (with `param`); `invalid_json`, `json_too_complex`: 400 with that code. */
    readonly kind: "invalid" | "invalid_json" | "json_too_complex"
    readonly message: string
    readonly param?: string
  }

/** Nesting of an import body: a contact's metadata at its deepest, inside the contacts array. */
const IMPORT_MAX_DEPTH = 16

/** A contact is about 4 values in 60 bytes: one value per 8 bytes admits any real list. */
const importMaxNodes = (chars: number) => 4_096 + Math.floor(chars / 8)

const decodeImport = Schema.decodeUnknownEither(ImportRequest)

const refuse = (kind: "invalid" | "invalid_json" | "json_too_complex", message: string, param?: string): JsonImportResult =>
  param === undefined || param === "" ? { ok: false, kind, message } : { ok: false, kind, message, param }

/** The first problem of a decoded body as `param` (`contacts[3].email`) and message. */
const firstIssue = (error: ParseResult.ParseError): JsonImportResult => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  const param = (issue?.path ?? []).reduce<string>(
    (acc, part) => typeof part === "number" ? `${acc}[${part}]` : acc === "" ? String(part) : `${acc}.${String(part)}`,
    ""
  )
  return refuse("invalid", issue?.message ?? "Invalid import body", param)
}

/**
 * The body decoded, or its refusal. Its own function so that the text and the parsed tree are
 * unreachable once it returns: the decoded contacts are all the worker's heap holds of them then.
 */
const decodeBody = (bytes: Uint8Array): Either.Either<typeof ImportRequest.Type, JsonImportResult> => {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")
  const parsed = parseBoundedJson(text, IMPORT_MAX_DEPTH, importMaxNodes(text.length))
  if (Either.isLeft(parsed)) {
    const rejection = parsed.left
    return Either.left(rejection.reason === "unstorable"
      ? refuse("invalid", rejection.message, rejection.param)
      : refuse(rejection.reason === "bounds" ? "json_too_complex" : "invalid_json", rejection.message))
  }
  const decoded = decodeImport(parsed.right)
  return Either.isLeft(decoded) ? Either.left(firstIssue(decoded.left)) : Either.right(decoded.right)
}

/** Parses, decodes and stages a JSON import body through `emit`; a refusal is a value. */
export const readJsonImport = (bytes: Uint8Array, emit: (chunk: Uint8Array) => void): JsonImportResult => {
  const decoded = decodeBody(bytes)
  if (Either.isLeft(decoded)) return decoded.left
  const body = decoded.right
  const tags = body.tags ?? []
  const rows = new ImportRows(tags, emit)
  const contacts = body.contacts as Array<(typeof body.contacts)[number] | undefined>
  for (let i = 0; i < contacts.length; i++) {
    rows.add(contacts[i]!)
    // Let the decoded contact go: its staged line is what is kept of it.
    contacts[i] = undefined
  }
  return {
    ok: true,
    staged: rows.finish(),
    options: { tags, updateExisting: body.update_existing ?? false, listIds: body.list_ids ?? [], confirmed: body.confirmed ?? false }
  }
}
