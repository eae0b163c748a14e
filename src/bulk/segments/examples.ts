/** The reference's errors and examples for /v1/bulk/segments (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { SegmentsGroup } from "./Api.ts"

const SEGMENT_ID = "sg_3hJ8kL1mN6pQ9rS2tU5v"
const NOT_FOUND = "404 `not_found` when this key has no segment `{id}`."
const UNKNOWN_LIST = "400 `validation_failed` (param names the rule) when a list rule names a list this key does not have."

const rules = {
  match: "all",
  rules: [
    { field: "tag", op: "has", value: "customer" },
    { field: "engagement", op: "opened", days: 30 },
    { field: "custom", op: "is", field_name: "city", value: "London" }
  ]
}

const segment = { id: SEGMENT_ID, name: "Engaged London customers", rules, created_at: "2026-11-02T10:15:00.000Z", updated_at: "2026-11-02T10:15:00.000Z" }

export const segmentsReference: GroupReference<typeof SegmentsGroup> = {
  preview: {
    errors: `${UNKNOWN_LIST.replace("(param names the rule)", "(param names the rule, or `list_id`)")} 422 \`query_too_expensive\` `
      + "when the query runs past the statement timeout.",
    request: { rules, limit: 10 },
    response: { total: 1, sample: [{ email: "ada@example.org", name: "Ada Lovelace", status: "active" }], sendable: 1 }
  },
  create: { errors: UNKNOWN_LIST, request: { name: "Engaged London customers", rules }, response: segment },
  list: {
    errors: "422 `query_too_expensive` when the read runs past the statement timeout.",
    response: { total: 1, limit: 50, offset: 0, items: [segment] }
  },
  read: { errors: NOT_FOUND, response: segment },
  update: {
    errors: `${NOT_FOUND} ${UNKNOWN_LIST}`,
    request: { name: "Engaged customers" },
    response: { ...segment, name: "Engaged customers", updated_at: "2026-11-03T08:00:00.000Z" }
  },
  remove: { errors: NOT_FOUND, response: { id: SEGMENT_ID, deleted: true } }
}
