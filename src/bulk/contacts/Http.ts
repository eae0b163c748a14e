import { HttpApiBuilder, type HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { groupApi } from "../../http/group-api.ts"
import { CurrentKey } from "../../http/auth.ts"
import { readBodyWithin } from "../../http/body-reader.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import {
  answerQueryTooExpensive,
  BadRequestError,
  conflict,
  type ConflictError,
  type ForbiddenError,
  notFound,
  type NotFoundError,
  payloadTooLarge,
  type PayloadTooLargeError,
  RateLimitedError,
  UnprocessableError,
  validationFailed,
  type UnavailableError
} from "../../http/errors.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import type { QueryTooExpensive } from "../../db/statement-timeout.ts"
import { ConfirmationMail } from "../lists/confirmation-mail.ts"
import { type ConfirmationRefusal, confirmationRefusal } from "../lists/Http.ts"
import { ContactsGroup } from "./Api.ts"
import { type ContactExists, type ContactNotFound, Contacts, type Owner, type StillSuppressed } from "./Contacts.ts"
import { CsvReader, type ImportRejected } from "./csv-reader.ts"
import { type ImportGate, type ImportOptions, importContacts as runImport, type TooManyInvalid, type UnknownLists } from "./import.ts"
import { previewImport } from "./import-preview.ts"
import type { MetadataTooLarge } from "./metadata-bound.ts"

type Failure = ContactNotFound | ContactExists | StillSuppressed | TooManyInvalid | ImportRejected | UnknownLists | MetadataTooLarge | SqlError

type Answer = NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | UnprocessableError | RateLimitedError

/** An import may also meet the confirmation mail's refusals (lists with double opt-in). */
const answerImport = (e: Failure | ConfirmationRefusal | QueryTooExpensive): Effect.Effect<never, Answer | ForbiddenError | RateLimitedError | UnavailableError> =>
  e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : e._tag === "ContactNotFound" || e._tag === "ContactExists" || e._tag === "StillSuppressed" || e._tag === "TooManyInvalid"
    || e._tag === "ImportRejected" || e._tag === "UnknownLists" || e._tag === "MetadataTooLarge" || e._tag === "SqlError"
    ? answer(e)
    : confirmationRefusal(e)

/** Every failure of this group as the API's envelope (SQL errors are defects: 500). */
const answer = (e: Failure): Effect.Effect<never, Answer> => {
  switch (e._tag) {
    case "ContactNotFound":
      return Effect.fail(notFound(`No contact ${e.ref}`))
    case "ContactExists":
      return Effect.fail(conflict(`A contact with the address ${e.email} exists already`))
    case "StillSuppressed":
      return Effect.fail(conflict(`${e.email} is still suppressed (${e.reason}): remove the suppression first`))
    case "TooManyInvalid":
      return Effect.fail(new UnprocessableError({
        type: "invalid_request_error",
        code: "too_many_invalid_recipients",
        message: `${e.invalid} of ${e.unique} unique addresses are invalid, more than ${e.gate.maxInvalidPct} % `
          + `(imports of ${e.gate.validationMin} or more addresses); nothing was imported`
      }))
    case "UnknownLists":
      return Effect.fail(validationFailed(`No list ${e.ids.join(", ")} of this key`, "list_ids"))
    case "MetadataTooLarge":
      // Nothing was imported: the check runs before any row is written, in the import's transaction.
      return Effect.fail(validationFailed(`${e.param} (row ${e.row}, ${e.email}) ${e.problem}; nothing was imported`, e.param))
    case "ImportRejected":
      return importRefusal(e)
    case "SqlError":
      return Effect.die(e)
  }
}

/** Seconds a client waits before trying an import again when every reader was taken. */
const IMPORT_BUSY_RETRY_AFTER_S = 5

const importRefusal = (e: ImportRejected): Effect.Effect<never, Answer> => {
  switch (e.reason) {
    case "invalid":
      return Effect.fail(validationFailed(e.message, e.param))
    case "invalid_json":
    case "json_too_complex":
      return Effect.fail(new BadRequestError({ type: "invalid_request_error", code: e.reason, message: e.message }))
    case "size":
      return Effect.fail(payloadTooLarge(e.message))
    case "busy":
      return Effect.zipRight(
        setResponseHeaders({ "Retry-After": String(IMPORT_BUSY_RETRY_AFTER_S) }),
        Effect.fail(new RateLimitedError({ type: "rate_limit_error", code: "rate_limit_exceeded", message: e.message }))
      )
    case "unavailable":
      // Only while the appliance shuts down, when its server is closing too.
      return Effect.die(e)
  }
}

const flag = (value: string | undefined) => value === "true" || value === "1"
const commaList = (value: string | undefined) => (value ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)

export const ContactsHttpLive = HttpApiBuilder.group(groupApi(ContactsGroup), "contacts", (handlers) =>
  Effect.gen(function*() {
    const contacts = yield* Contacts
    const confirmationMail = yield* ConfirmationMail
    const signal = yield* QueueSignal
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const csvReader = yield* CsvReader
    const gate: ImportGate = {
      validationMin: config.importValidationMin,
      maxInvalidPct: config.importMaxInvalidPct,
      statementTimeoutMs: config.longQueryTimeoutMs
    }
    const bodyLimits = {
      maxBytes: config.maxJsonBytes,
      limitName: "MAX_JSON_MB",
      minBytesPerSecond: config.httpMinUploadBytesPerSecond,
      graceMs: config.httpUploadGraceMs
    }

    /** A body read within MAX_JSON_MB, as the JSON and the CSV import read it. */
    const importBody = (request: HttpServerRequest.HttpServerRequest) =>
      readBodyWithin(request, bodyLimits).pipe(
        Effect.catchTag("BodyRejected", (rejected): Effect.Effect<never, BadRequestError | PayloadTooLargeError> =>
          rejected.status === 413
            ? Effect.fail(payloadTooLarge(rejected.message))
            : rejected.status === 400
            ? Effect.fail(validationFailed(rejected.message))
            : Effect.die(rejected))
      )

    const importContacts = (
      request: HttpServerRequest.HttpServerRequest,
      query: {
        readonly list_ids?: string | undefined
        readonly tags?: string | undefined
        readonly update_existing?: string | undefined
        readonly confirmed?: string | undefined
      }
    ) =>
      Effect.gen(function*() {
        const me: Owner = yield* CurrentKey
        const contentType = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        const csv = contentType === "text/csv"
        // A CSV row's metadata is its extra columns: the refusal names the field, the message the row.
        const metadataParam = csv ? () => "metadata" : (row: number) => `contacts[${row - 1}].metadata`
        const body = yield* importBody(request)
        const tags = commaList(query.tags)
        const csvOptions: ImportOptions = { tags, updateExisting: flag(query.update_existing), listIds: commaList(query.list_ids), confirmed: flag(query.confirmed) }
        // Read (parsed, decoded) off the main thread (csv-read.ts, import-read.ts), its rows copied
        // into the import's staging table as they are read (import-staging.ts).
        const imported = csv
          ? runImport(me, (onChunk) => csvReader.read(me.accountId, body, tags, onChunk), () => csvOptions, gate, metadataParam)
          : runImport(me, (onChunk) => csvReader.readJson(me.accountId, body, onChunk), (read) => read.options, gate, metadataParam)
        return yield* imported.pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(ConfirmationMail, confirmationMail),
          Effect.provideService(QueueSignal, signal),
          Effect.catchAll(answerImport)
        )
      })

    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => contacts.create(me, payload)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => contacts.list(me, urlParams)).pipe(
          Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })
        ))
      .handleRaw("import", ({ request, urlParams }) => importContacts(request, urlParams))
      .handle("importPreview", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) =>
          previewImport(me, Array.isArray(payload) ? payload : (payload as { emails: ReadonlyArray<string> }).emails, gate, config.queryTimeoutMs)).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.catchTags({ QueryTooExpensive: answerQueryTooExpensive, SqlError: Effect.die })
          ))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => contacts.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => contacts.update(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => contacts.remove(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("engagement", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => contacts.engagement(me, path.email, urlParams.limit, urlParams.offset)).pipe(
          Effect.catchAll((e) => e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e))
        ))
      .handle("messages", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => contacts.messages(me, path.email, urlParams.limit, urlParams.offset)).pipe(
          Effect.catchAll((e) => e._tag === "QueryTooExpensive" ? answerQueryTooExpensive(e) : answer(e))
        ))
  }))
