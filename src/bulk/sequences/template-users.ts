/** The sequence steps that take content from a template: such a template is not deleted (templates/users.ts). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const sequenceStepsUsingTemplate = (templateId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ sequence_id: string; id: number }>`SELECT sequence_id, id FROM sequence_steps WHERE template_id = ${templateId} ORDER BY sequence_id, id`,
      (rows) => rows.map((r) => `sequence ${r.sequence_id} step ${r.id}`)
    ))
