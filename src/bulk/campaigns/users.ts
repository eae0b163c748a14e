/**
 * Campaigns as users of lists and templates: a list named by any campaign of its key is `in_use`
 * for the lists delete; a template used by a campaign not yet completed or cancelled is not deleted
 * (its content is read when the campaign starts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ListUserCheck, TemplateUserCheck } from "../resource-users.ts"

export const campaignsUsingList: ListUserCheck = (keyId, listId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`SELECT id FROM campaigns WHERE key_id = ${keyId} AND list_ids @> ARRAY[${listId}]::text[] ORDER BY id`,
      (rows) => rows.map((r) => `campaign ${r.id}`)
    ))

export const campaignsUsingTemplate: TemplateUserCheck = (templateId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string; status: string }>`SELECT id, status FROM campaigns
        WHERE template_id = ${templateId} AND status NOT IN ('completed', 'cancelled') ORDER BY id`,
      (rows) => rows.map((r) => `campaign ${r.id} (${r.status})`)
    ))
