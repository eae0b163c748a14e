/**
 * Campaigns as resources: create, read, list, update (draft only) and delete (draft, completed or
 * cancelled), owned by the API key that created them (another key's campaign is not found). Every
 * save checks what the campaign names (the key's template, lists and segment) and its inline
 * content with the templates' rules (`readyToSave`: MJML compiled once, here; every field parsed by
 * the rendering engine; 512 KB), so a broken campaign is refused when saved rather than when sent.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withPageDeadline } from "../../db/statement-timeout.ts"
import { newId } from "../../lib/ids.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import { readyToSave } from "../templates/fields.ts"
import { deleteCampaignTracking } from "../tracking/store.ts"
import type { Owner } from "../templates/Templates.ts"
import { type CampaignFields, type CampaignVariant, type VariantInput, type CampaignRow, selectCampaigns, toRecord } from "./record.ts"
import { allowed, type CampaignCall, type CampaignStatus } from "./states.ts"
import { completeVariant, variantsProblem } from "./variants.ts"

export class CampaignNotFound extends Data.TaggedError("CampaignNotFound")<{ readonly id: string }> {}
/** The call is not allowed in the campaign's state (409 conflict, nothing changed). */
export class CampaignStateConflict extends Data.TaggedError("CampaignStateConflict")<{
  readonly id: string
  readonly call: CampaignCall
  readonly status: CampaignStatus
}> {}
/** A field that names something the key does not have, or content that does not fit together (400). */
export class CampaignInvalid extends Data.TaggedError("CampaignInvalid")<{ readonly message: string; readonly param: string }> {}

export type CampaignPatch = { readonly [K in Exclude<keyof CampaignFields, "variants">]?: CampaignFields[K] | undefined } & {
  readonly variants?: ReadonlyArray<VariantInput> | null | undefined
}

const INLINE = ["subject", "html", "body_text", "mjml", "preheader"] as const

const EMPTY: Omit<CampaignFields, "name"> = {
  template_id: null,
  subject: null,
  html: null,
  body_text: null,
  mjml: null,
  preheader: null,
  from_email: null,
  from_name: null,
  reply_to: null,
  list_ids: [],
  segment_id: null,
  variants: null,
  ab_test: null
}

/** The row's columns as written: the A/B fields as JSON text for their jsonb columns. */
const storable = (fields: CampaignFields) => ({
  ...fields,
  list_ids: [...fields.list_ids],
  variants: fields.variants === null ? null : JSON.stringify(fields.variants),
  ab_test: fields.ab_test === null ? null : JSON.stringify(fields.ab_test)
})

export class Campaigns extends Effect.Service<Campaigns>()("herald/Campaigns", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { queryTimeoutMs } = yield* AppConfig
    const engine = yield* RenderEngine
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The row with its counts, locked when `forUpdate`, if `owner`'s key owns it. */
    const find = (owner: Owner, id: string, forUpdate = false) =>
      Effect.gen(function*() {
        const rows = forUpdate
          // Locked for a state change, not shown: no counts nor sender read (the row still has every field of its type).
          ? yield* sql<CampaignRow>`SELECT c.*, 0 AS sent_count, 0 AS failed_count, NULL AS sender_email, NULL AS sender_name,
              NULL AS sender_reply_to FROM campaigns c
              WHERE c.id = ${id} AND c.key_id = ${owner.keyId} FOR UPDATE`
          : yield* sql<CampaignRow>`${selectCampaigns(sql)} WHERE c.id = ${id} AND c.key_id = ${owner.keyId}`
        if (rows[0] === undefined) return yield* new CampaignNotFound({ id })
        return rows[0]
      })

    const readRow = (id: string) =>
      Effect.map(sql<CampaignRow>`${selectCampaigns(sql)} WHERE c.id = ${id}`, (rows) => rows[0]!)

    /** The fields as they will be stored: references checked, inline content compiled and parsed. */
    const ready = (owner: Owner, given: CampaignFields) =>
      Effect.gen(function*() {
        const fields: CampaignFields = { ...given, variants: given.variants === null ? null : given.variants.map(completeVariant) }
        const problem = variantsProblem(fields)
        if (problem !== undefined) return yield* new CampaignInvalid(problem)
        const variants = fields.variants === null ? null : yield* readyVariants(owner, fields.variants)
        if (fields.template_id !== null) {
          const inline = INLINE.find((k) => fields[k] !== null)
          if (inline !== undefined) {
            return yield* new CampaignInvalid({ message: "Give template_id or inline content (subject, html, body_text, mjml, preheader), not both", param: inline })
          }
          const found = yield* sql`SELECT 1 FROM templates WHERE id = ${fields.template_id} AND key_id = ${owner.keyId}`
          if (found.length === 0) return yield* new CampaignInvalid({ message: `No template ${fields.template_id}`, param: "template_id" })
        }
        if (fields.list_ids.length > 0) {
          const lists = yield* sql<{ id: string }>`SELECT id FROM lists WHERE key_id = ${owner.keyId} AND id IN ${sql.in(fields.list_ids)}`
          const known = new Set(lists.map((l) => l.id))
          const unknown = fields.list_ids.findIndex((id) => !known.has(id))
          if (unknown !== -1) return yield* new CampaignInvalid({ message: `No list ${fields.list_ids[unknown]}`, param: `list_ids[${unknown}]` })
        }
        if (fields.segment_id !== null) {
          const found = yield* sql`SELECT 1 FROM segments WHERE id = ${fields.segment_id} AND key_id = ${owner.keyId}`
          if (found.length === 0) return yield* new CampaignInvalid({ message: `No segment ${fields.segment_id}`, param: "segment_id" })
        }
        if (fields.template_id !== null) return { ...fields, variants, list_ids: [...new Set(fields.list_ids)] }
        const compiled = yield* readyToSave(engine, owner.accountId, {
          name: fields.name,
          subject: fields.subject ?? "",
          html: fields.html ?? "",
          body_text: fields.body_text ?? "",
          mjml: fields.mjml,
          preheader: fields.preheader,
          vars: {},
          from_email: fields.from_email,
          from_name: fields.from_name,
          reply_to: fields.reply_to
        })
        return { ...fields, variants, html: fields.mjml === null ? fields.html : compiled.html, list_ids: [...new Set(fields.list_ids)] }
      })

    /** Each variant's template checked, its inline content compiled (MJML) and parsed as a campaign's. */
    const readyVariants = (owner: Owner, variants: ReadonlyArray<CampaignVariant>) =>
      Effect.forEach(variants, (variant, i) =>
        Effect.gen(function*() {
          if (variant.template_id !== null) {
            const found = yield* sql`SELECT 1 FROM templates WHERE id = ${variant.template_id} AND key_id = ${owner.keyId}`
            if (found.length === 0) return yield* new CampaignInvalid({ message: `No template ${variant.template_id}`, param: `variants[${i}].template_id` })
            return variant
          }
          const compiled = yield* readyToSave(engine, owner.accountId, {
            name: `variant ${i}`,
            subject: variant.subject,
            html: variant.html ?? "",
            body_text: variant.body_text ?? "",
            mjml: variant.mjml,
            preheader: variant.preheader,
            vars: {},
            from_email: null,
            from_name: null,
            reply_to: null
          })
          return { ...variant, html: variant.mjml === null ? variant.html : compiled.html }
        }))

    const create = (owner: Owner, input: CampaignPatch & { readonly name: string }) =>
      Effect.gen(function*() {
        const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined))
        const fields = yield* ready(owner, { ...EMPTY, ...given } as CampaignFields)
        const at = yield* now
        const id = newId("cp")
        yield* sql`INSERT INTO campaigns ${sql.insert({
          id,
          account_id: owner.accountId,
          key_id: owner.keyId,
          ...storable(fields),
          status: "draft",
          created_at: at,
          updated_at: at
        })}`
        return toRecord(yield* readRow(id))
      })

    const read = (owner: Owner, id: string) => Effect.map(find(owner, id), toRecord)

    const list = (owner: Owner, limit: number, offset: number) =>
      Effect.gen(function*() {
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM campaigns WHERE key_id = ${owner.keyId}`
        const rows = yield* sql<CampaignRow>`${selectCampaigns(sql)} WHERE c.key_id = ${owner.keyId}
          ORDER BY c.created_at DESC, c.id LIMIT ${limit} OFFSET ${offset}`
        return { total: count?.total ?? 0, limit, offset, items: rows.map(toRecord) }
      }).pipe(withPageDeadline(sql, queryTimeoutMs, "campaigns"))

    const update = (owner: Owner, id: string, patch: CampaignPatch) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* find(owner, id, true)
        if (!allowed("update", current.status)) return yield* new CampaignStateConflict({ id, call: "update", status: current.status })
        const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as CampaignPatch
        // The html of an mjml campaign is what its mjml compiles to: an html alone would be lost.
        if (given.html !== undefined && given.mjml === undefined && current.mjml !== null && given.html !== null) {
          return yield* new CampaignInvalid({ message: "This campaign's html is compiled from its mjml: change the mjml, or send mjml: null with the html", param: "html" })
        }
        // Choosing a template clears inline content not given in the same call, and the other way round.
        const switching = given.template_id !== undefined && given.template_id !== null
          ? Object.fromEntries(INLINE.map((k) => [k, null]))
          : INLINE.some((k) => given[k] !== undefined && given[k] !== null) && given.template_id === undefined ? { template_id: null } : {}
        const base: CampaignFields = {
          name: current.name,
          template_id: current.template_id,
          subject: current.subject,
          html: current.html,
          body_text: current.body_text,
          mjml: current.mjml,
          preheader: current.preheader,
          from_email: current.from_email,
          from_name: current.from_name,
          reply_to: current.reply_to,
          list_ids: current.list_ids,
          segment_id: current.segment_id,
          variants: current.variants,
          ab_test: current.ab_test
        }
        const fields = yield* ready(owner, { ...base, ...switching, ...given } as CampaignFields)
        yield* sql`UPDATE campaigns SET ${sql.update({ ...storable(fields), updated_at: yield* now })}
          WHERE id = ${id}`
        return toRecord(yield* readRow(id))
      }))

    const remove = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* find(owner, id, true)
        if (!allowed("delete", current.status)) return yield* new CampaignStateConflict({ id, call: "delete", status: current.status })
        // Its aggregate counters stay in the key's rates (issue 30 item 4: kept indefinitely); a draft has none.
        if (current.started_at !== null) {
          yield* sql`INSERT INTO deleted_campaigns ${sql.insert({ id, account_id: current.account_id, key_id: current.key_id, deleted_at: yield* now })}
            ON CONFLICT (id) DO NOTHING`
        }
        yield* sql`DELETE FROM campaigns WHERE id = ${id}`
        // Its tracking detail and links go with it; the counters the rates read stay (store.ts).
        yield* deleteCampaignTracking(id)
        return { id, deleted: true as const }
      }))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      find,
      create: (owner: Owner, input: CampaignPatch & { readonly name: string }) => withSql(create(owner, input)),
      read,
      list,
      update: (owner: Owner, id: string, patch: CampaignPatch) => withSql(update(owner, id, patch)),
      remove: (owner: Owner, id: string) => withSql(remove(owner, id))
    } as const
  })
}) {}
