/**
 * The shape of a "who uses this" check: the owner of something that can name a list or a template
 * (segments, campaigns, sequence steps) answers with a description of each user, and the lists and
 * templates refuse a delete while any remain (lists/users.ts, templates/users.ts). The types live
 * apart from both sides so that the checks' owners and their callers do not import each other.
 */
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect } from "effect"

/** The users of a key's list (a list is named only by resources of its own key). */
export type ListUserCheck = (keyId: string, listId: string) => Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient>

/** The users of a template, e.g. `campaign cp_… (sending)`. */
export type TemplateUserCheck = (templateId: string) => Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient>
