/**
 * Who uses a list: a list referenced by a saved segment's `list` rule or by a campaign is not
 * deleted (`DELETE /v1/bulk/lists/{id}` → 409 `conflict`; `POST /v1/bulk/lists/delete` reports it
 * under `in_use`). The segments and campaigns owners each add their check to `LIST_USER_CHECKS`
 * (a query naming the users of a list, e.g. `segment sg_…`). Until then the registry is empty.
 */
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export type ListUserCheck = (listId: string) => Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient>

export const LIST_USER_CHECKS: ReadonlyArray<ListUserCheck> = []

/** Every user of the list, described for the answer; empty when it may be deleted. */
export const listUsers = (listId: string, checks: ReadonlyArray<ListUserCheck> = LIST_USER_CHECKS) =>
  Effect.map(Effect.forEach(checks, (check) => check(listId)), (found) => found.flat())
