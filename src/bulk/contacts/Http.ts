import { HttpApiBuilder, type HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, ParseResult, Schema } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { HeraldApi } from "../../http/api.ts"
import { CurrentKey } from "../../http/auth.ts"
import { readBodyWithin } from "../../http/body-reader.ts"
import { jsonBoundsProblem } from "../../http/bounded-json.ts"
import {
  BadRequestError,
  conflict,
  type ConflictError,
  type ForbiddenError,
  notFound,
  type NotFoundError,
  payloadTooLarge,
  type PayloadTooLargeError,
  type RateLimitedError,
  UnprocessableError,
  validationFailed,
  type UnavailableError
} from "../../http/errors.ts"
import { isEmailAddress } from "../../lib/email.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { ConfirmationMail } from "../lists/confirmation-mail.ts"
import { type ConfirmationRefusal, confirmationRefusal } from "../lists/Http.ts"
import { ImportRequest } from "./Api.ts"
import { type ContactExists, type ContactNotFound, Contacts, type Owner, type StillSuppressed } from "./Contacts.ts"
import { type CsvRejected, type ImportGate, ImportRows, readCsv, type TooManyInvalid, type UnknownLists, writeImport } from "./import.ts"

type Failure = ContactNotFound | ContactExists | StillSuppressed | TooManyInvalid | CsvRejected | UnknownLists | SqlError

type Answer = NotFoundError | ConflictError | BadRequestError | PayloadTooLargeError | UnprocessableError

/** An import may also meet the confirmation mail's refusals (lists with double opt-in). */
const answerImport = (e: Failure | ConfirmationRefusal): Effect.Effect<never, Answer | ForbiddenError | RateLimitedError | UnavailableError> =>
  e._tag === "ContactNotFound" || e._tag === "ContactExists" || e._tag === "StillSuppressed" || e._tag === "TooManyInvalid"
    || e._tag === "CsvRejected" || e._tag === "UnknownLists" || e._tag === "SqlError"
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
    case "CsvRejected":
      return Effect.fail(e.tooLarge ? payloadTooLarge(e.message) : validationFailed(e.message))
    case "SqlError":
      return Effect.die(e)
  }
}

const decodeImport = Schema.decodeUnknownEither(ImportRequest)

/** The first problem of a decoded body as `param` (`contacts[3].email`) and message. */
const firstIssue = (error: ParseResult.ParseError) => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  const param = (issue?.path ?? []).reduce<string>(
    (acc, part) => typeof part === "number" ? `${acc}[${part}]` : acc === "" ? String(part) : `${acc}.${String(part)}`,
    ""
  )
  return validationFailed(issue?.message ?? "Invalid import body", param === "" ? undefined : param)
}

const flag = (value: string | undefined) => value === "true" || value === "1"
const commaList = (value: string | undefined) => (value ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)

export const ContactsHttpLive = HttpApiBuilder.group(HeraldApi, "contacts", (handlers) =>
  Effect.gen(function*() {
    const contacts = yield* Contacts
    const confirmationMail = yield* ConfirmationMail
    const signal = yield* QueueSignal
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const gate: ImportGate = { validationMin: config.importValidationMin, maxInvalidPct: config.importMaxInvalidPct }
    const bodyLimits = {
      maxBytes: config.maxJsonBytes,
      limitName: "MAX_JSON_MB",
      minBytesPerSecond: config.httpMinUploadBytesPerSecond,
      graceMs: config.httpUploadGraceMs
    }

    /** A JSON import body: read within MAX_JSON_MB, parsed within bounds sized for a contact list. */
    const jsonImport = (request: HttpServerRequest.HttpServerRequest, rows: ImportRows) =>
      Effect.gen(function*() {
        const bytes = yield* readBodyWithin(request, bodyLimits).pipe(
          Effect.catchTag("BodyRejected", (rejected): Effect.Effect<never, BadRequestError | PayloadTooLargeError> =>
            rejected.status === 413
              ? Effect.fail(payloadTooLarge(rejected.message))
              : rejected.status === 400
              ? Effect.fail(validationFailed(rejected.message))
              : Effect.die(rejected))
        )
        const text = bytes.toString("utf8")
        // A contact is about 4 values in 60 bytes: one value per 8 bytes admits any real list.
        const problem = jsonBoundsProblem(text, 16, 4_096 + Math.floor(text.length / 8))
        if (problem !== undefined) return yield* new BadRequestError({ type: "invalid_request_error", code: "json_too_complex", message: problem })
        const json = yield* Effect.try({
          try: () => JSON.parse(text) as unknown,
          catch: (e) => new BadRequestError({ type: "invalid_request_error", code: "invalid_json", message: `Invalid JSON: ${(e as Error).message}` })
        })
        const decoded = decodeImport(json)
        if (Either.isLeft(decoded)) return yield* firstIssue(decoded.left)
        for (const contact of decoded.right.contacts) rows.add(contact)
        return {
          tags: decoded.right.tags ?? [],
          updateExisting: decoded.right.update_existing ?? false,
          listIds: decoded.right.list_ids ?? [],
          confirmed: decoded.right.confirmed ?? false
        }
      })

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
        const rows = new ImportRows()
        const contentType = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        const options = contentType === "text/csv"
          ? yield* Effect.gen(function*() {
            yield* readCsv(NodeHttpServerRequest.toIncomingMessage(request), config.maxJsonBytes, rows).pipe(Effect.catchAll(answer))
            return {
              tags: commaList(query.tags),
              updateExisting: flag(query.update_existing),
              listIds: commaList(query.list_ids),
              confirmed: flag(query.confirmed)
            }
          })
          : yield* jsonImport(request, rows)
        return yield* writeImport(me, rows, options, gate).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(ConfirmationMail, confirmationMail),
          Effect.provideService(QueueSignal, signal),
          Effect.catchAll(answerImport)
        )
      })

    const preview = (owner: Owner, emails: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const unique = new Set(emails.map((e) => e.trim().toLowerCase()))
        const invalid = [...unique].filter((address) => !isEmailAddress(address)).length
        const existing = unique.size === 0 ? [] : yield* sql<{ email: string }>`
          SELECT email FROM contacts WHERE key_id = ${owner.keyId} AND lower(email) = ANY(${[...unique]}) ORDER BY lower(email)`
        return {
          existing: existing.map((r) => r.email),
          total_unique: unique.size,
          total_received: emails.length,
          invalid_syntax: invalid,
          validation_min: gate.validationMin,
          max_invalid_pct: gate.maxInvalidPct
        }
      })

    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentKey, (me) => contacts.create(me, payload)).pipe(Effect.catchAll(answer)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentKey, (me) => contacts.list(me, urlParams)).pipe(Effect.orDie))
      .handleRaw("import", ({ request, urlParams }) => importContacts(request, urlParams))
      .handle("importPreview", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => preview(me, Array.isArray(payload) ? payload : (payload as { emails: ReadonlyArray<string> }).emails)).pipe(Effect.orDie))
      .handle("read", ({ path }) => Effect.flatMap(CurrentKey, (me) => contacts.read(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentKey, (me) => contacts.update(me, path.id, payload)).pipe(Effect.catchAll(answer)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentKey, (me) => contacts.remove(me, path.id)).pipe(Effect.catchAll(answer)))
      .handle("engagement", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (me) => contacts.engagement(me, path.email, urlParams.limit, urlParams.offset)).pipe(Effect.catchAll(answer)))
  }))
