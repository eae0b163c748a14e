/**
 * Segments: a preview that evaluates rules without saving them, and saved segments (name and
 * rules) owned by the API key that created them, for campaigns to target. Reads `contacts`,
 * `lists`, `list_memberships`, `contact_engagement` and `suppressions` as a read model (the
 * audience as the rules see it); writes only `segments`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withPageDeadline, withStatementTimeout } from "../../db/statement-timeout.ts"
import { newId } from "../../lib/ids.ts"
import { confirmedMembership, sendableContact } from "../lists/sendable.ts"
import { campaignsUsingSegment } from "../campaigns/users.ts"
import { compileRules, listReferences, type SegmentRules } from "./rules.ts"

export interface Owner {
  readonly accountId: string
  readonly keyId: string
}

export interface SegmentRecord {
  readonly id: string
  readonly name: string
  readonly rules: SegmentRules
  readonly created_at: string
  readonly updated_at: string
}

export class SegmentNotFound extends Data.TaggedError("SegmentNotFound")<{ readonly id: string }> {}
/** A rule or option that decodes but names something the key does not have (a list). */
/** Deleting a segment a campaign not yet completed or cancelled names (409 conflict, nothing deleted). */
export class SegmentInUse extends Data.TaggedError("SegmentInUse")<{ readonly id: string; readonly users: ReadonlyArray<string> }> {}
export class SegmentInvalid extends Data.TaggedError("SegmentInvalid")<{ readonly message: string; readonly param: string }> {}

interface Row {
  readonly id: string
  readonly name: string
  readonly rules: SegmentRules
  readonly created_at: Date
  readonly updated_at: Date
}

const toRecord = (row: Row): SegmentRecord => ({
  id: row.id,
  name: row.name,
  rules: row.rules,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

/**
 * The saved segments of the key whose `list` rules name `listId` (the lists delete reports the
 * list `in_use`): jsonb containment over the stored rules, so any position of the rule matches.
 */
export const segmentsUsingList = (keyId: string, listId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`SELECT id FROM segments WHERE key_id = ${keyId}
      AND rules -> 'rules' @> jsonb_build_array(jsonb_build_object('field', 'list', 'value', ${listId}::text))
      ORDER BY id`).pipe(Effect.map((rows) => rows.map((r) => r.id)))

export interface PreviewRequest {
  readonly rules: SegmentRules
  readonly list_id?: string | undefined
  readonly limit: number
}

export class Segments extends Effect.Service<Segments>()("herald/Segments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { queryTimeoutMs } = yield* AppConfig
    /** A preview is one statement whose cost the rules decide (issue 26 finding 9): bounded, and a 422 naming them past it. */
    const previewDeadline = withStatementTimeout(sql, queryTimeoutMs, {
      param: "rules",
      message: `The rules took longer than ${queryTimeoutMs} ms to evaluate: use fewer or narrower rules (a tag, status or list rule first), or a list_id`
    })
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The key's lists among `ids`, with whether they require confirmation. */
    const listsOf = (owner: Owner, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(new Map<string, boolean>())
        : Effect.map(
          sql<{ id: string; require_confirmation: boolean }>`SELECT id, require_confirmation FROM lists
            WHERE key_id = ${owner.keyId} AND id = ANY(${[...new Set(ids)]})`,
          (rows) => new Map(rows.map((r) => [r.id, r.require_confirmation]))
        )

    /** Every `list` rule names a list of the key (another key's list does not exist for it). */
    const checkLists = (owner: Owner, rules: SegmentRules) =>
      Effect.gen(function*() {
        const references = listReferences(rules)
        const known = yield* listsOf(owner, references.map((r) => r.listId))
        const unknown = references.find((r) => !known.has(r.listId))
        if (unknown !== undefined) return yield* new SegmentInvalid({ message: `No list ${unknown.listId}`, param: unknown.param })
      })

    /**
     * One statement: the matching contacts of the key (narrowed to `list_id`'s members), how many
     * of them are sendable on the target (DESIGN "Sendable", lists/sendable.ts), and a sample.
     */
    const preview = (owner: Owner, request: PreviewRequest) =>
      Effect.gen(function*() {
        yield* checkLists(owner, request.rules)
        const target = request.list_id
        const lists = yield* listsOf(owner, target === undefined ? [] : [target])
        if (target !== undefined && !lists.has(target)) return yield* new SegmentInvalid({ message: `No list ${target}`, param: "list_id" })
        const condition = compileRules(sql, { keyId: owner.keyId, now: yield* now }, request.rules)
        const inTarget = target === undefined
          ? sql`TRUE`
          : sql`EXISTS (SELECT 1 FROM list_memberships t WHERE t.contact_id = c.id AND t.list_id = ${target})`
        const confirmedOnTarget = target !== undefined
          ? sql`EXISTS (SELECT 1 FROM list_memberships t WHERE t.contact_id = c.id AND t.list_id = ${target}
              AND ${confirmedMembership(sql, lists.get(target) === true, "t")})`
          : sql`TRUE`
        const [row] = yield* sql<{ total: number; sendable: number; sample: Array<{ email: string; name: string | null; status: string }> }>`
          WITH matched AS (
            SELECT c.id, c.email, c.name, c.status, c.created_at,
              (${sendableContact(sql)} AND ${confirmedOnTarget}) AS sendable
            FROM contacts c
            WHERE c.key_id = ${owner.keyId} AND ${inTarget} AND ${condition}
          )
          SELECT (SELECT count(*)::integer FROM matched) AS total,
            (SELECT count(*)::integer FROM matched WHERE sendable) AS sendable,
            coalesce((SELECT json_agg(json_build_object('email', email, 'name', name, 'status', status) ORDER BY created_at DESC, id)
              FROM (SELECT * FROM matched ORDER BY created_at DESC, id LIMIT ${request.limit}) s), '[]'::json) AS sample`
        return { total: row?.total ?? 0, sample: row?.sample ?? [], sendable: row?.sendable ?? 0 }
      }).pipe(previewDeadline)

    const find = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT id, name, rules, created_at, updated_at FROM segments WHERE key_id = ${owner.keyId} AND id = ${id}`
        if (rows[0] === undefined) return yield* new SegmentNotFound({ id })
        return rows[0]
      })

    const create = (owner: Owner, input: { readonly name: string; readonly rules: SegmentRules }) =>
      Effect.gen(function*() {
        yield* checkLists(owner, input.rules)
        const at = yield* now
        const id = newId("sg")
        yield* sql`INSERT INTO segments (id, account_id, key_id, name, rules, created_at, updated_at)
          VALUES (${id}, ${owner.accountId}, ${owner.keyId}, ${input.name}, ${JSON.stringify(input.rules)}::jsonb, ${at}, ${at})`
        return toRecord(yield* find(owner, id))
      })

    const list = (owner: Owner, limit: number, offset: number) =>
      Effect.gen(function*() {
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM segments WHERE key_id = ${owner.keyId}`
        const rows = yield* sql<Row>`SELECT id, name, rules, created_at, updated_at FROM segments WHERE key_id = ${owner.keyId}
          ORDER BY created_at DESC, id LIMIT ${limit} OFFSET ${offset}`
        return { total: count?.total ?? 0, limit, offset, items: rows.map(toRecord) }
      }).pipe(withPageDeadline(sql, queryTimeoutMs, "segments"))

    const update = (owner: Owner, id: string, patch: { readonly name?: string | undefined; readonly rules?: SegmentRules | undefined }) =>
      Effect.gen(function*() {
        yield* find(owner, id)
        if (patch.rules !== undefined) yield* checkLists(owner, patch.rules)
        const at = yield* now
        yield* sql`UPDATE segments SET
            name = coalesce(${patch.name ?? null}, name),
            rules = coalesce(${patch.rules === undefined ? null : JSON.stringify(patch.rules)}::jsonb, rules),
            updated_at = ${at}
          WHERE key_id = ${owner.keyId} AND id = ${id}`
        return toRecord(yield* find(owner, id))
      })

    const remove = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const mine = yield* sql<{ id: string }>`SELECT id FROM segments WHERE key_id = ${owner.keyId} AND id = ${id} FOR UPDATE`
        if (mine[0] === undefined) return yield* new SegmentNotFound({ id })
        const users = yield* Effect.provideService(campaignsUsingSegment(owner.keyId, id), SqlClient.SqlClient, sql)
        if (users.length > 0) return yield* new SegmentInUse({ id, users })
        const rows = yield* sql<{ id: string }>`DELETE FROM segments WHERE key_id = ${owner.keyId} AND id = ${id} RETURNING id`
        if (rows[0] === undefined) return yield* new SegmentNotFound({ id })
        return { id, deleted: true as const }
      }))

    return { preview, create, list, read: (owner: Owner, id: string) => Effect.map(find(owner, id), toRecord), update, remove } as const
  })
}) {}
