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

/**
 * Campaigns not yet completed or cancelled that name the segment: deleting it is refused (409), as
 * for lists and templates, rather than the campaign pausing when it comes due (issue 30 item 3).
 */
export const campaignsUsingSegment = (keyId: string, segmentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string; status: string }>`SELECT id, status FROM campaigns
        WHERE key_id = ${keyId} AND segment_id = ${segmentId} AND status NOT IN ('completed', 'cancelled') ORDER BY id`,
      (rows) => rows.map((r) => `campaign ${r.id} (${r.status})`)
    ))

export const campaignsUsingTemplate: TemplateUserCheck = (templateId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string; status: string }>`SELECT id, status FROM campaigns
        WHERE template_id = ${templateId} AND status NOT IN ('completed', 'cancelled') ORDER BY id`,
      (rows) => rows.map((r) => `campaign ${r.id} (${r.status})`)
    ))
