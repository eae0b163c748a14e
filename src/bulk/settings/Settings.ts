/**
 * A key's bulk settings (issue 30 item 9): its postal address and its footer's sources, one row per
 * key in `bulk_settings`. The footers are engine templates, compiled when saved (each on its own,
 * so a failure names its field); `footerOf` is what a campaign's freeze and the step scheduler
 * store with the content, which delivery then renders (src/bulk/render/footer.ts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { DEFAULT_FOOTER_HTML, DEFAULT_FOOTER_TEXT, type Footer } from "../render/footer.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import type { Owner } from "../templates/Templates.ts"

export interface SettingsRecord {
  readonly postal_address: string | null
  readonly footer_html: string | null
  readonly footer_text: string | null
  readonly updated_at: string | null
}

export interface SettingsInput {
  readonly postal_address: string
  readonly footer_html?: string | null | undefined
  readonly footer_text?: string | null | undefined
}

/** The key has no postal address: mail that must carry one cannot go (CAN-SPAM). */
export class PostalAddressMissing extends Data.TaggedError("PostalAddressMissing")<{ readonly keyId: string }> {}

interface SettingsRow {
  readonly postal_address: string
  readonly footer_html: string | null
  readonly footer_text: string | null
  readonly updated_at: Date
}

const NONE: SettingsRecord = { postal_address: null, footer_html: null, footer_text: null, updated_at: null }

/** The footers of `keys` (absent: no postal address), read in one statement inside the caller's transaction. */
export const footersOf = (keyIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const footers = new Map<string, Footer>()
    if (keyIds.length === 0) return footers
    const rows = yield* sql<SettingsRow & { key_id: string }>`
      SELECT key_id, postal_address, footer_html, footer_text, updated_at FROM bulk_settings WHERE key_id IN ${sql.in([...new Set(keyIds)])}`
    for (const row of rows) {
      footers.set(row.key_id, {
        html: row.footer_html ?? DEFAULT_FOOTER_HTML,
        text: row.footer_text ?? DEFAULT_FOOTER_TEXT,
        postal_address: row.postal_address
      })
    }
    return footers
  })

/** The key's footer; PostalAddressMissing when it has no postal address. */
export const footerOf = (keyId: string) =>
  Effect.flatMap(footersOf([keyId]), (footers) => {
    const footer = footers.get(keyId)
    return footer === undefined ? Effect.fail(new PostalAddressMissing({ keyId })) : Effect.succeed(footer)
  })

export class BulkSettings extends Effect.Service<BulkSettings>()("herald/BulkSettings", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const engine = yield* RenderEngine

    const read = (owner: Owner) =>
      Effect.map(
        sql<SettingsRow>`SELECT postal_address, footer_html, footer_text, updated_at FROM bulk_settings WHERE key_id = ${owner.keyId}`,
        ([row]): SettingsRecord => row === undefined ? NONE : { ...row, updated_at: row.updated_at.toISOString() }
      )

    const write = (owner: Owner, input: SettingsInput) =>
      Effect.gen(function*() {
        const html = input.footer_html ?? null
        const text = input.footer_text ?? null
        // Each footer compiled on its own, so a failure names its own field.
        if (html !== null) yield* engine.fields(owner.accountId, [{ name: "footer_html", mode: "html", source: html, param: "footer_html" }], null)
        if (text !== null) yield* engine.fields(owner.accountId, [{ name: "footer_text", mode: "text", source: text, param: "footer_text" }], null)
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO bulk_settings (key_id, account_id, postal_address, footer_html, footer_text, updated_at)
          VALUES (${owner.keyId}, ${owner.accountId}, ${input.postal_address}, ${html}, ${text}, ${at})
          ON CONFLICT (key_id) DO UPDATE SET postal_address = excluded.postal_address, footer_html = excluded.footer_html,
            footer_text = excluded.footer_text, updated_at = excluded.updated_at`
        return yield* read(owner)
      })

    return { read, write } as const
  })
}) {}
