/**
 * Who uses a list: a list referenced by a saved segment's `list` rule or by a campaign is not
 * deleted (`DELETE /v1/bulk/lists/{id}` → 409 `conflict`; `POST /v1/bulk/lists/delete` reports it
 * under `in_use`). Each owner of something that can name a list adds its check to
 * `LIST_USER_CHECKS` (a query naming the users of a list, e.g. `segment sg_…`): saved segments
 * and campaigns, and sequences whose trigger names the list.
 */
import { Effect } from "effect"
import { campaignsUsingList } from "../campaigns/users.ts"
import type { ListUserCheck } from "../resource-users.ts"
import { segmentsUsingList } from "../segments/Segments.ts"
import { sequencesTriggeredBy } from "../sequences/triggered.ts"

const savedSegments: ListUserCheck = (keyId, listId) =>
  Effect.map(segmentsUsingList(keyId, listId), (ids) => ids.map((id) => `segment ${id}`))

export const LIST_USER_CHECKS: ReadonlyArray<ListUserCheck> = [savedSegments, campaignsUsingList, sequencesTriggeredBy]

/** Every user of the list, described for the answer; empty when it may be deleted. */
export const listUsers = (keyId: string, listId: string, checks: ReadonlyArray<ListUserCheck> = LIST_USER_CHECKS) =>
  Effect.map(Effect.forEach(checks, (check) => check(keyId, listId)), (found) => found.flat())
