/**
 * Bulk templates, owned by the API key that created them (another key's template is not found),
 * with their versions: every create, update and restore stores the whole content as a version in
 * the same transaction, numbered from the template's `version_seq` (updated under the row lock),
 * and prunes what is older than the newest HERALD_TEMPLATE_VERSIONS_MAX.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withPageDeadline, withStatementTimeout } from "../../db/statement-timeout.ts"
import { newId } from "../../lib/ids.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import { readyToSave, type TemplateFields } from "./fields.ts"
import { templateUsers } from "./users.ts"

export interface Owner {
  readonly accountId: string
  readonly keyId: string
}

export interface TemplateRecord extends TemplateFields {
  readonly id: string
  readonly created_at: string
  readonly updated_at: string
}

export interface VersionItem {
  readonly id: number
  readonly name: string
  readonly subject: string
  readonly actor: string
  readonly created_at: string
  readonly tiene_html: boolean
  readonly html_bytes: number
}

/** One version with the content it stored (the history omits it): for a diff and a restore. */
export interface VersionContent extends VersionItem, Omit<TemplateFields, "name" | "subject"> {}

export class TemplateNotFound extends Data.TaggedError("TemplateNotFound")<{ readonly id: string }> {}
export class VersionNotFound extends Data.TaggedError("VersionNotFound")<{ readonly id: string; readonly version: number }> {}
export class TemplateInUse extends Data.TaggedError("TemplateInUse")<{ readonly id: string; readonly users: ReadonlyArray<string> }> {}
/** An html given for a template whose html is compiled from its mjml: it would be overwritten. */
export class HtmlFromMjml extends Data.TaggedError("HtmlFromMjml")<{}> {}

interface Row extends TemplateFields {
  readonly id: string
  readonly created_at: Date
  readonly updated_at: Date
}

const toRecord = (row: Row): TemplateRecord => ({
  id: row.id,
  name: row.name,
  subject: row.subject,
  html: row.html,
  body_text: row.body_text,
  mjml: row.mjml,
  preheader: row.preheader,
  vars: row.vars,
  from_email: row.from_email,
  from_name: row.from_name,
  reply_to: row.reply_to,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

const contentOf = (f: TemplateFields) => ({
  name: f.name,
  subject: f.subject,
  html: f.html,
  body_text: f.body_text,
  mjml: f.mjml,
  preheader: f.preheader,
  vars: JSON.stringify(f.vars),
  from_email: f.from_email,
  from_name: f.from_name,
  reply_to: f.reply_to
})

export type TemplatePatch = { readonly [K in keyof TemplateFields]?: TemplateFields[K] | undefined }

export class Templates extends Effect.Service<Templates>()("herald/Templates", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const engine = yield* RenderEngine
    const { templateVersionsMax, queryTimeoutMs } = yield* AppConfig
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The next version, written with the template's content, and the pruning: inside the caller's transaction. */
    const storeVersion = (templateId: string, actor: string, fields: TemplateFields, at: Date) =>
      Effect.gen(function*() {
        const [seq] = yield* sql<{ version_seq: number }>`
          UPDATE templates SET version_seq = version_seq + 1 WHERE id = ${templateId} RETURNING version_seq`
        const id = seq!.version_seq
        yield* sql`INSERT INTO template_versions ${sql.insert({ template_id: templateId, id, actor, ...contentOf(fields), created_at: at })}`
        yield* sql`DELETE FROM template_versions WHERE template_id = ${templateId} AND id <= ${id - templateVersionsMax}`
      })

    /** The template row, locked when `forUpdate`, if `owner`'s key owns it. */
    const find = (owner: Owner, id: string, forUpdate = false) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT * FROM templates WHERE id = ${id} AND key_id = ${owner.keyId}
          ${forUpdate ? sql`FOR UPDATE` : sql``}`
        if (rows[0] === undefined) return yield* new TemplateNotFound({ id })
        return rows[0]
      })

    const create = (owner: Owner, fields: TemplateFields) =>
      Effect.gen(function*() {
        const ready = yield* readyToSave(engine, owner.accountId, fields)
        const at = yield* now
        const id = newId("tp")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO templates ${sql.insert({ id, account_id: owner.accountId, key_id: owner.keyId, ...contentOf(ready), created_at: at, updated_at: at })}`
          yield* storeVersion(id, owner.keyId, ready, at)
        }))
        return toRecord({ id, ...ready, created_at: at, updated_at: at })
      })

    const read = (owner: Owner, id: string) => Effect.map(find(owner, id), toRecord)

    const list = (owner: Owner, limit: number, offset: number) =>
      Effect.gen(function*() {
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM templates WHERE key_id = ${owner.keyId}`
        const rows = yield* sql<Row>`SELECT * FROM templates WHERE key_id = ${owner.keyId}
          ORDER BY created_at DESC, id LIMIT ${limit} OFFSET ${offset}`
        return { total: count?.total ?? 0, limit, offset, items: rows.map(toRecord) }
      }).pipe(withPageDeadline(sql, queryTimeoutMs, "templates"))

    /** Replaces the content with `next` (checked and compiled) and stores it as a new version. */
    const save = (owner: Owner, id: string, next: (current: TemplateFields) => Effect.Effect<TemplateFields, HtmlFromMjml | VersionNotFound>) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* find(owner, id, true)
        const ready = yield* readyToSave(engine, owner.accountId, yield* next(current))
        const at = yield* now
        yield* sql`UPDATE templates SET ${sql.update({ ...contentOf(ready), updated_at: at })} WHERE id = ${id}`
        yield* storeVersion(id, owner.keyId, ready, at)
        return toRecord({ ...current, ...ready, updated_at: at })
      }))

    const update = (owner: Owner, id: string, patch: TemplatePatch) =>
      save(owner, id, (current) => {
        const given = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
        const merged: TemplateFields = { ...current, ...given }
        // The html of an mjml template is what its mjml compiles to: an html alone would be lost.
        return patch.html !== undefined && merged.mjml !== null && patch.mjml === undefined
          ? Effect.fail(new HtmlFromMjml())
          : Effect.succeed(merged)
      })

    const remove = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* find(owner, id, true)
        const users = yield* templateUsers(id)
        if (users.length > 0) return yield* new TemplateInUse({ id, users })
        yield* sql`DELETE FROM templates WHERE id = ${id}`
        return { id, deleted: true as const }
      }))

    const versions = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        yield* find(owner, id)
        const rows = yield* sql<{ id: number; name: string; subject: string; actor: string; created_at: Date; html_bytes: number }>`
          SELECT id, name, subject, actor, created_at, octet_length(html) AS html_bytes
          FROM template_versions WHERE template_id = ${id} ORDER BY id DESC`
        const items: ReadonlyArray<VersionItem> = rows.map((r) => ({
          id: r.id,
          name: r.name,
          subject: r.subject,
          actor: r.actor,
          created_at: r.created_at.toISOString(),
          tiene_html: r.html_bytes > 0,
          html_bytes: r.html_bytes
        }))
        return { items, max: templateVersionsMax }
      })

    /** One version of the key's template, with its content (VersionNotFound when pruned or never made). */
    const version = (owner: Owner, id: string, version: number) =>
      Effect.gen(function*() {
        yield* find(owner, id)
        const rows = yield* sql<TemplateFields & { id: number; actor: string; created_at: Date }>`
          SELECT id, name, subject, html, body_text, mjml, preheader, vars, from_email, from_name, reply_to, actor, created_at
          FROM template_versions WHERE template_id = ${id} AND id = ${version}`
        const row = rows[0]
        if (row === undefined) return yield* new VersionNotFound({ id, version })
        const html_bytes = Buffer.byteLength(row.html)
        const answer: VersionContent = { ...row, created_at: row.created_at.toISOString(), tiene_html: html_bytes > 0, html_bytes }
        return answer
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, { message: `Reading the version took longer than ${queryTimeoutMs} ms: try again` }))

    /** The version's content becomes the template's again, as a new version. */
    const restore = (owner: Owner, id: string, version: number) =>
      save(owner, id, () =>
        Effect.gen(function*() {
          const rows = yield* sql<TemplateFields>`SELECT name, subject, html, body_text, mjml, preheader, vars,
            from_email, from_name, reply_to FROM template_versions WHERE template_id = ${id} AND id = ${version}`
          if (rows[0] === undefined) return yield* new VersionNotFound({ id, version })
          return rows[0]
        }).pipe(Effect.catchTag("SqlError", Effect.die)))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      create: (owner: Owner, fields: TemplateFields) => withSql(create(owner, fields)),
      read,
      list,
      update: (owner: Owner, id: string, patch: TemplatePatch) => withSql(update(owner, id, patch)),
      remove: (owner: Owner, id: string) => withSql(remove(owner, id)),
      versions,
      version,
      restore: (owner: Owner, id: string, version: number) => withSql(restore(owner, id, version))
    } as const
  })
}) {}
